#include "probes/module_policy.hpp"

#include <gtest/gtest.h>

namespace gpucheck::probes {
namespace {

TEST(ModulePolicy, SecureBootEfivar) {
  using namespace std::string_literals;
  EXPECT_EQ(parse_secure_boot_efivar("\x06\x00\x00\x00\x01"s), true);
  EXPECT_EQ(parse_secure_boot_efivar("\x06\x00\x00\x00\x00"s), false);
  EXPECT_EQ(parse_secure_boot_efivar("\x06\x00\x00\x00"s), std::nullopt);
  EXPECT_EQ(parse_secure_boot_efivar("\x06\x00\x00\x00\x07"s), std::nullopt);
}

TEST(ModulePolicy, Lockdown) {
  EXPECT_EQ(parse_lockdown("none [integrity] confidentiality\n"), "integrity");
  EXPECT_EQ(parse_lockdown("[none] integrity confidentiality"), "none");
  EXPECT_EQ(parse_lockdown("none integrity"), "");
}

TEST(ModulePolicy, BlacklistLines) {
  const auto lines = parse_modprobe_blacklist("# blacklist nvidia\n"
                                              "blacklist nouveau\n"
                                              "  blacklist nvidia  \n"
                                              "blacklist nvidia_drm\n"
                                              "install nvidia /bin/false\n"
                                              "install nvidia /sbin/modprobe --ignore-install x\n"
                                              "options nvidia NVreg_DynamicPowerManagement=0x02\n"
                                              "alias nvidia off\n");
  EXPECT_EQ(lines, (std::vector<std::string>{"blacklist nvidia", "blacklist nvidia_drm",
                                             "install nvidia /bin/false"}));
  EXPECT_TRUE(parse_modprobe_blacklist("").empty());
}

} // namespace
} // namespace gpucheck::probes
