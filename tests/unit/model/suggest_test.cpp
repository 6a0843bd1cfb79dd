// "Did you mean" (gpucheck/suggest.hpp): the nearest known word, only when it is near.
#include "gpucheck/suggest.hpp"

#include <gtest/gtest.h>

namespace gpucheck {
namespace {

TEST(Suggest, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0U);
  EXPECT_EQ(edit_distance("abc", ""), 3U);
  EXPECT_EQ(edit_distance("quick", "quik"), 1U); // a deletion
  EXPECT_EQ(edit_distance("json", "jsno"), 1U);  // a swap of neighbours
  EXPECT_EQ(edit_distance("driver", "drvier"), 1U);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("GPU.ECC", "gpu.ecc"), 0U); // case ignored
}

TEST(Suggest, TheNearestCandidateOnlyWhenNear) {
  const std::vector<std::string> flags{"--quick", "--quiet", "--json", "--level"};
  EXPECT_EQ(did_you_mean("--quik", flags), "--quick");
  EXPECT_EQ(did_you_mean("--jsno", flags), "--json");
  EXPECT_EQ(did_you_mean("--zzzzzzzz", flags), std::nullopt);
  EXPECT_EQ(did_you_mean("--json", flags), std::nullopt); // itself: nothing to suggest
  EXPECT_EQ(did_you_mean("", flags), std::nullopt);
  // Short words allow one edit, longer ones more.
  const std::vector<std::string> formats{"text", "json", "md"};
  EXPECT_EQ(did_you_mean("jsn", formats), "json");
  EXPECT_EQ(did_you_mean("xml", formats), std::nullopt);
  EXPECT_EQ(did_you_mean("gpu.ecc_uncorected", {"gpu.ecc_uncorrected", "gpu.ecc_corrected"}),
            "gpu.ecc_uncorrected");
  // A word cut short or run on is near its whole.
  EXPECT_EQ(did_you_mean("explai", {"explain", "list"}), "explain");
  EXPECT_EQ(did_you_mean_words("drver", {"driver", "env"}), " (did you mean 'driver'?)");
  EXPECT_EQ(did_you_mean_words("qqqq", {"driver", "env"}), "");
}

} // namespace
} // namespace gpucheck
