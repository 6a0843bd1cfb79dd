// Which of cudnnFind's results the legacy path times again (no GPU needed).
#include <gtest/gtest.h>

#include "gpu_checks/cudnn/runner.hpp"

namespace gpucheck::gpu_checks::cudnn {
namespace {

TEST(CudnnLegacy, TheFirstTwoThatRanWithinOneAndAHalfTimesAreTimedAgain) {
  // A disturbed reading put WINOGRAD_NONFUSED (truly 0.26 ms) before FFT_TILING (0.22 ms): both
  // are timed again.
  EXPECT_EQ(find_finalists({{true, 0.20F}, {true, 0.23F}, {true, 0.37F}}),
            (std::vector<size_t>{0, 1}));
  // One that failed is passed over; the second must be within 1.5x of the first.
  EXPECT_EQ(find_finalists({{false, 0.0F}, {true, 0.20F}, {false, 0.1F}, {true, 0.30F}}),
            (std::vector<size_t>{1, 3}));
  EXPECT_EQ(find_finalists({{true, 0.20F}, {true, 0.31F}}), (std::vector<size_t>{0}));
  EXPECT_EQ(find_finalists({{true, 0.20F}, {true, 0.21F}, {true, 0.22F}}),
            (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(find_finalists({}).empty());
  EXPECT_TRUE(find_finalists({{false, 0.1F}}).empty());
}

} // namespace
} // namespace gpucheck::gpu_checks::cudnn
