// --only/--skip (gpucheck/selection.hpp): whole id components, or the first words of an id's last
// one as the README writes them, never part of a word; an exact id selects only itself.
#include "gpucheck/selection.hpp"

#include <gtest/gtest.h>

namespace gpucheck {
namespace {

const std::vector<std::string> k_ids{"gpu.compute", "gpu.compute_mode", "gpu.pcie_link",
                                     "gpu.p2p",     "gpu.ecc",          "driver.installed",
                                     "driver.nvml", "lib.cudnn",        "lib.cudnn_copies"};

std::vector<std::string> selected(const Selection& given) {
  const Selection resolved = resolve_selection(given, k_ids);
  std::vector<std::string> out;
  for (const std::string& id : k_ids) {
    if (is_selected(id, resolved)) {
      out.push_back(id);
    }
  }
  return out;
}

TEST(Selection, PatternsMatchWholeComponentsOrTheFirstWordsOfTheLast) {
  EXPECT_TRUE(pattern_matches("gpu.ecc", "gpu"));
  EXPECT_TRUE(pattern_matches("gpu.ecc", "gpu."));
  EXPECT_TRUE(pattern_matches("gpu.pcie_link", "gpu.pcie"));
  EXPECT_FALSE(pattern_matches("gpu.p2p", "gpu.p"));
  EXPECT_FALSE(pattern_matches("gpux.ecc", "gpu"));
  EXPECT_FALSE(pattern_matches("gpu.ecc", ""));
}

TEST(Selection, TheReadmesSkipAndExactIds) {
  // gpucheck --only gpu --skip gpu.pcie (README): every gpu check but gpu.pcie_link.
  EXPECT_EQ(selected({{"gpu"}, {"gpu.pcie"}}),
            (std::vector<std::string>{"gpu.compute", "gpu.compute_mode", "gpu.p2p", "gpu.ecc"}));
  // An exact id is itself alone, not the ids it is the first word of.
  EXPECT_EQ(selected({{"gpu.compute"}, {}}), (std::vector<std::string>{"gpu.compute"}));
  EXPECT_EQ(selected({{"lib.cudnn"}, {}}), (std::vector<std::string>{"lib.cudnn"}));
  EXPECT_EQ(selected({{"lib"}, {"lib.cudnn"}}), (std::vector<std::string>{"lib.cudnn_copies"}));
  // Part of a word selects nothing; the caller refuses it.
  EXPECT_EQ(selected({{"gpu.p"}, {}}), std::vector<std::string>{});
  const Selection typo = resolve_selection({{"drver"}, {}}, k_ids);
  EXPECT_EQ(typo.only, std::vector<std::string>{"drver"});
}

} // namespace
} // namespace gpucheck
