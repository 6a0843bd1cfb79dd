// Whether an nv-fabricmanager process is in /proc, read under a sysroot fixture.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fakes/fake_gpu.hpp"
#include "probes/collect.hpp"

namespace gpucheck::probes {
namespace {

void process(const std::filesystem::path& root, int pid, const std::string& comm) {
  const std::filesystem::path dir = root / "proc" / std::to_string(pid);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "comm") << comm << "\n";
}

TEST(FabricManagerProbe, SeenByItsCommandName) {
  testing::TempDir root;
  EXPECT_EQ(fabric_manager_running(Sysroot(root.path().string())), std::nullopt); // no /proc
  process(root.path(), 1, "systemd");
  process(root.path(), 812, "nvidia-persiste");
  std::filesystem::create_directories(root.path() / "proc" / "sys");
  EXPECT_EQ(fabric_manager_running(Sysroot(root.path().string())), false);
  process(root.path(), 2201, "nv-fabricmanage"); // comm is cut at 15 characters
  EXPECT_EQ(fabric_manager_running(Sysroot(root.path().string())), true);
}

} // namespace
} // namespace gpucheck::probes
