// env.wsl: WSL2's GPU layout (F17). Under WSL2 the Windows driver serves the GPU through
// /dev/dxg and mounts its user-space libraries as plain files in /usr/lib/wsl/lib; there is no
// Linux kernel module, and a Linux driver installed inside the distribution shadows them.
// Source: NVIDIA's CUDA on WSL user guide, https://docs.nvidia.com/cuda/wsl-user-guide/.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_env_wsl_cuda_meta_package{"env.wsl_cuda_meta_package"};
constexpr FindingCode k_env_wsl_ldconfig_warning{"env.wsl_ldconfig_warning"};

constexpr FindingSpec k_findings[] = {
    {k_env_wsl_cuda_meta_package, Severity::warn, "CUDA meta-package under WSL2",
     "Under WSL2 the CUDA toolkit must be installed alone (cuda-toolkit-X-Y); the meta-packages "
     "cuda, cuda-X-Y and cuda-runtime-X-Y depend on cuda-drivers, which tries to install a Linux "
     "NVIDIA driver inside WSL and breaks the Windows driver's libraries (NVIDIA's CUDA on WSL "
     "user guide).",
     "CUDA meta-packages installed, which pull in the Linux driver (cuda-drivers): {0}",
     "sudo apt remove --purge {0} cuda-drivers, then install the toolkit alone: sudo apt install "
     "cuda-toolkit-X-Y (from NVIDIA's wsl-ubuntu repository); the Windows driver provides the "
     "driver",
     where("the CUDA meta-packages installed")},
    {k_env_wsl_ldconfig_warning, Severity::info, "ldconfig's WSL warning is harmless",
     "WSL mounts the Windows driver's libcuda.so, libcuda.so.1 and libcuda.so.1.1 as plain "
     "files, not symbolic links, so every ldconfig run prints \"/usr/lib/wsl/lib/libcuda.so.1 is "
     "not a symbolic link\". It changes nothing.",
     "/usr/lib/wsl/lib/libcuda.so.1 is a plain file: ldconfig prints \"is not a symbolic link\" "
     "for it, which is harmless",
     "nothing to do; do not replace or delete the files in /usr/lib/wsl/lib"},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "env.wsl", "WSL2 GPU layout",
    "Under WSL2, /dev/dxg and the Windows driver's libraries in /usr/lib/wsl/lib exist and no "
    "Linux NVIDIA driver inside the distribution shadows them.",
    CheckKind::passive};

constexpr std::string_view k_wsl_dir = "/usr/lib/wsl/";

/// Whether a path is the Windows driver's (under /usr/lib/wsl/, after any sysroot prefix).
bool under_wsl(std::string_view path) {
  return path.find(k_wsl_dir) != std::string_view::npos;
}

/// A meta-package that pulls in cuda-drivers (cuda, cuda-12-8, cuda-runtime-12-8), as opposed to a
/// driver package itself.
bool is_meta_package(std::string_view name) {
  return name == "cuda" || (name.starts_with("cuda-") && !name.starts_with("cuda-drivers"));
}

/// The Linux driver library the loader picks instead of the Windows driver's, as
/// "libcuda.so.1 -> /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", or "".
std::vector<std::string> shadowing_libraries(const SystemSnapshot& s) {
  std::vector<std::string> found;
  const std::pair<const LibraryLoad*, const char*> loads[] = {{&s.cuda.library, "cuda"},
                                                              {&s.nvml.library, "nvml"}};
  for (const auto& [load, family] : loads) {
    const std::string& path = load->real_path.empty() ? load->path : load->real_path;
    if (load->loaded && !path.empty() && !under_wsl(path)) {
      found.push_back(fmt::format("{} -> {}", load->name, path));
      continue;
    }
    // Not loaded (or not probed): the copy the loader would pick, from the files on disk.
    if (const LibraryFamily* copies = s.library(family); copies != nullptr && !load->loaded) {
      for (const LibraryCopy& copy : copies->copies) {
        if (copy.selected && !under_wsl(copy.real_path) &&
            copy.path.find("/stubs/") == std::string::npos) {
          found.push_back(fmt::format("{} -> {}", copy.path, copy.real_path));
        }
      }
    }
  }
  return found;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  if (!s.environment.wsl) {
    return {skip_result(k_info, "not running under WSL")};
  }
  if (!s.environment.wsl_details) {
    return {skip_result(k_info, "running under WSL, but its layout was not recorded")};
  }
  const WslInfo& wsl = *s.environment.wsl_details;
  std::vector<Finding> findings;
  if (!wsl.dxg) {
    findings.push_back(make_finding(codes::k_env_wsl_file_missing, std::nullopt, "/dev/dxg"));
  }
  bool regular_libcuda = false;
  for (const WslFile& file : wsl.files) {
    const bool required =
        file.path.ends_with("libcuda.so.1") || file.path.ends_with("libnvidia-ml.so.1");
    if (required && !file.exists) {
      findings.push_back(make_finding(codes::k_env_wsl_file_missing, std::nullopt, file.path));
    }
    regular_libcuda =
        regular_libcuda || (file.path.ends_with("libcuda.so.1") && file.exists && !file.is_symlink);
  }
  for (const std::string& library : shadowing_libraries(s)) {
    findings.push_back(make_finding(codes::k_env_wsl_linux_driver_library, std::nullopt, library));
  }
  std::vector<std::string> drivers;
  std::vector<std::string> metas;
  for (const std::string& package : wsl.driver_packages) {
    (is_meta_package(package) ? metas : drivers).push_back(package);
  }
  if (!drivers.empty()) {
    findings.push_back(make_finding(codes::k_env_wsl_linux_driver_package, std::nullopt,
                                    fmt::format("{}", fmt::join(drivers, " "))));
  }
  if (!metas.empty()) {
    findings.push_back(make_finding(k_env_wsl_cuda_meta_package, std::nullopt,
                                    fmt::format("{}", fmt::join(metas, " "))));
  }
  if (regular_libcuda) {
    findings.push_back(make_finding(k_env_wsl_ldconfig_warning, std::nullopt));
  }
  const std::string kernel = wsl.kernel_release.empty() ? "unknown kernel" : wsl.kernel_release;
  return {make_result(
      k_info, fmt::format("WSL2 ({}): the Windows driver serves the GPU through /dev/dxg", kernel),
      std::move(findings))};
}
} // namespace

CheckDef env_wsl_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
