// --format reason and the Drain attribute through the real binary: the recorded snapshots
// replayed, the exit code (1 only when a finding drains the node), --output reason:FILE, --ignore,
// and `gpucheck explain` saying whether a code drains.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/run_binary.hpp"
#include "cli/snapshots.hpp"

namespace gpucheck::cli_test {
namespace {

RunResult reason_of(const std::string& name, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--quick", "--format", "reason", "--from-snapshot",
                                snapshot_file(name)};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_gpucheck(args);
}

TEST(ReasonCli, ABrokenNodeGetsOneLineAndExit1) {
  const RunResult r = reason_of("degraded_hw");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // GPU 1 of the snapshot: 3 uncorrected ECC errors and a row remap pending; its serial.
  EXPECT_EQ(r.out,
            "gpucheck: gpu.ecc_uncorrected GPU 1 (1320924004411), gpu.row_remap_pending GPU 1 "
            "(1320924004411)\n");
  EXPECT_EQ(r.err, "") << "no progress line for a machine format";

  const RunResult mismatch = reason_of("nvml_mismatch");
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.err;
  EXPECT_EQ(mismatch.out.rfind("gpucheck: driver.version_mismatch", 0), 0u) << mismatch.out;
}

TEST(ReasonCli, AHealthyTwinAndAFailingButUnbrokenNodeGiveNothingAndExit0) {
  for (const char* name : {"h100x8_healthy", "h200_healthy"}) {
    const RunResult r = reason_of(name);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
    EXPECT_EQ(r.out, "") << name;
  }
  // No driver: no drain (exit 0), but no "healthy" either: the line says gpucheck saw nothing
  // (issue 36 item 3), which node-problem-detector reads as Unknown.
  const RunResult blind = reason_of("no_driver");
  EXPECT_EQ(blind.exit_code, 0) << blind.err;
  EXPECT_EQ(blind.out, "gpucheck-blind: cannot see the GPUs or the driver: driver.missing\n");
  // The same machine without a driver does fail its checks: the reason format alone says 0.
  const RunResult as_json =
      run_gpucheck({"--quick", "--json", "--from-snapshot", snapshot_file("no_driver")});
  EXPECT_EQ(as_json.exit_code, 1) << as_json.err;
}

TEST(ReasonCli, IgnoredCodesDoNotDrain) {
  const RunResult r = reason_of(
      "degraded_hw", {"--ignore", "gpu.ecc_uncorrected", "--ignore", "gpu.row_remap_pending"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(ReasonCli, AnOutputFileTakesTheLineAndTheVerdictKeepsTheExitCode) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpucheck-reason-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "reason").string();
  const RunResult r = run_gpucheck({"--quick", "--json", "--output", "reason:" + file,
                                    "--from-snapshot", snapshot_file("degraded_hw")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("gpucheck: gpu.ecc_uncorrected GPU 1 (1320924004411)", 0), 0u)
      << text.str();
  EXPECT_EQ(r.out.rfind("{", 0), 0u) << "the JSON report stays on stdout";

  const RunResult healthy = run_gpucheck({"--quick", "--json", "--output", "reason:" + file,
                                          "--from-snapshot", snapshot_file("h100x8_healthy")});
  EXPECT_EQ(healthy.exit_code, 0) << healthy.err;
  std::ifstream again(file);
  std::stringstream empty;
  empty << again.rdbuf();
  EXPECT_EQ(empty.str(), "") << "an empty file when nothing drains";
  std::filesystem::remove_all(dir);
}

TEST(ReasonCli, ExplainSaysWhetherACodeDrains) {
  const RunResult ecc = run_gpucheck({"explain", "gpu.ecc_uncorrected"});
  EXPECT_EQ(ecc.exit_code, 0) << ecc.err;
  EXPECT_NE(ecc.out.find("\nDrain: yes ("), std::string::npos) << ecc.out;
  const RunResult cudnn = run_gpucheck({"explain", "lib.cudnn_missing"});
  EXPECT_EQ(cudnn.exit_code, 0) << cudnn.err;
  EXPECT_NE(cudnn.out.find("\nDrain: no ("), std::string::npos) << cudnn.out;
}

} // namespace
} // namespace gpucheck::cli_test
