#pragma once
// Test support for the fake NVIDIA libraries: a scenario file in a fresh temporary directory and
// a ChildRequest whose environment points the loader at the fakes (README.md).

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "process/child_process.hpp"

namespace gpucheck::testing {

/// Directory of the fake libraries (build tree), set by tests/CMakeLists.txt.
inline std::string fake_lib_dir() {
  return GPUCHECK_FAKE_LIB_DIR;
}

/// A path inside the fake library directory, e.g. fake_lib_path("stubs").
inline std::string fake_lib_path(const std::string& relative) {
  return (std::filesystem::path(GPUCHECK_FAKE_LIB_DIR) / relative).string();
}

/// A fresh directory under the system temp dir, removed with everything in it at destruction.
class TempDir {
public:
  TempDir() {
    std::random_device random;
    const auto base = std::filesystem::temp_directory_path();
    for (;;) {
      m_path =
          base / ("gpucheck-test-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
      if (std::filesystem::create_directory(m_path)) {
        break;
      }
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
};

/// A machine described by one scenario file; requests run a child mode against the fakes.
class FakeMachine {
public:
  explicit FakeMachine(const std::string& scenario, std::string lib_dir = fake_lib_dir())
      : m_lib_dir(std::move(lib_dir)) {
    m_scenario = m_dir.path() / "scenario.txt";
    std::ofstream(m_scenario) << scenario;
  }

  /// A child request with LD_LIBRARY_PATH=<fakes>, FAKE_GPU_SCENARIO=<file>, and
  /// CUDA_VISIBLE_DEVICES unset (or set to `visible`).
  [[nodiscard]] process::ChildRequest request(std::string mode,
                                              std::vector<std::string> args = {}) const {
    process::ChildRequest r;
    r.mode = std::move(mode);
    r.args = std::move(args);
    r.timeout = std::chrono::seconds(20);
    r.env = {{"LD_LIBRARY_PATH", m_lib_dir},
             {"FAKE_GPU_SCENARIO", m_scenario.string()},
             {"CUDA_VISIBLE_DEVICES", m_visible}};
    return r;
  }

  void set_visible_devices(std::optional<std::string> visible) { m_visible = std::move(visible); }
  void set_lib_dir(std::string lib_dir) { m_lib_dir = std::move(lib_dir); }
  [[nodiscard]] const std::filesystem::path& dir() const { return m_dir.path(); }

private:
  TempDir m_dir;
  std::string m_lib_dir;
  std::filesystem::path m_scenario;
  std::optional<std::string> m_visible;
};

/// Run a child that must deliver a result; the payload, or a test failure naming why not.
inline nlohmann::json run_ok(const process::ChildRequest& request) {
  const process::ChildOutcome outcome = process::run_child(request);
  EXPECT_TRUE(outcome.ok()) << "child " << request.mode << " failed: "
                            << (outcome.failure ? std::string(to_string(outcome.failure->kind)) +
                                                      " " + outcome.failure->detail
                                                : std::string())
                            << "\n"
                            << outcome.stderr_tail;
  return outcome.ok() ? *outcome.payload : nlohmann::json();
}

/// This process's /proc/self/comm (what the NVML probe reports as a process name).
inline std::string own_comm() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

} // namespace gpucheck::testing
