#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/packages.hpp"
#include "checks/rules/path_text.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "driver.version_match", "Kernel module matches user-space driver",
    "The loaded kernel module version equals the version of libnvidia-ml and libcuda (and NVML "
    "does not report a driver/library mismatch).",
    CheckKind::passive};

constexpr int k_nvml_lib_rm_version_mismatch = 18;
constexpr std::string_view k_nvml_mismatch_source =
    "nvmlInit_v2 returned LIB_RM_VERSION_MISMATCH (18)";

struct UserVersion {
  std::string version;
  std::string source;
};

std::vector<UserVersion> user_space_versions(const SystemSnapshot& s) {
  std::vector<UserVersion> versions;
  if (s.nvml.library.loaded) {
    if (auto v = soname_version(s.nvml.library.real_path, "libnvidia-ml")) {
      versions.push_back({*v, fmt::format("file {}", s.nvml.library.real_path)});
    }
  }
  if (s.nvml.driver_version) {
    versions.push_back({*s.nvml.driver_version, "NVML driver version"});
  }
  // A libcuda from a cuda-compat directory is newer than the module on purpose.
  if (s.cuda.library.loaded && !path_through_component(s.cuda.library.real_path, "compat")) {
    if (auto v = soname_version(s.cuda.library.real_path, "libcuda")) {
      versions.push_back({*v, fmt::format("file {}", s.cuda.library.real_path)});
    }
  }
  return versions;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const bool nvml_mismatch = s.nvml.init_result == k_nvml_lib_rm_version_mismatch;
  const std::vector<UserVersion> versions = user_space_versions(s);
  const std::optional<std::string>& kernel = s.kernel_module.version;

  std::vector<std::string> differing;
  std::vector<std::string> sources;
  if (kernel) {
    for (const UserVersion& v : versions) {
      if (compare_padded(Version::leading(v.version), Version::leading(*kernel)) != 0) {
        if (std::find(differing.begin(), differing.end(), v.version) == differing.end()) {
          differing.push_back(v.version);
        }
        sources.push_back(v.source);
      }
    }
  }
  if (nvml_mismatch) {
    sources.emplace_back(k_nvml_mismatch_source);
  }
  if (!sources.empty()) {
    const std::string user = differing.empty() ? std::string("another version")
                                               : fmt::format("{}", fmt::join(differing, ", "));
    const std::string module = kernel.value_or("unknown");
    return {make_result(k_info,
                        fmt::format("kernel module {} does not match user-space {}", module, user),
                        {make_finding(codes::k_driver_version_mismatch, std::nullopt, module, user,
                                      fmt::format("{}", fmt::join(sources, "; ")),
                                      driver_hold(context.snapshot.host.os,
                                                  driver_branch_text(context.snapshot)))})};
  }
  if (!kernel) {
    return {skip_result(k_info, "the kernel module version is unknown")};
  }
  if (versions.empty()) {
    return {skip_result(k_info, "no user-space driver version to compare with")};
  }
  return {make_result(k_info,
                      fmt::format("kernel module and user-space driver are both {}", *kernel), {})};
}
} // namespace

CheckDef driver_version_match_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
