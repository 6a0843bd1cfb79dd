#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <span>

#include "checks/checks.hpp"
#include "checks/rules/path_text.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/stack_versions.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_lib_cudnn_cuda_major_mix{"lib.cudnn_cuda_major_mix"};
constexpr FindingCode k_lib_cudnn_older_copy_loaded{"lib.cudnn_older_copy_loaded"};

constexpr FindingSpec k_findings[] = {
    {k_lib_cudnn_cuda_major_mix, Severity::warn, "cuDNN copies for different CUDA majors",
     "cuDNN copies built for different CUDA major versions are installed; a program can pick the "
     "wrong one (pip nvidia-*-cu12 and -cu13 wheels in one environment).",
     "cuDNN copies built for different CUDA majors: {0}",
     "keep one CUDA major per environment: use cuDNN built for CUDA {1} and remove or isolate "
     "the others (separate virtual environments for -cu12 and -cu13 wheels)",
     where("the cuDNN copies, each with its CUDA major and path",
           "the CUDA major to keep (the runtime's, else the driver's)")},
    {k_lib_cudnn_older_copy_loaded, Severity::warn, "Older cuDNN copy wins",
     "Several cuDNN copies are installed and the loader picks an older one than the newest "
     "copy present.",
     "the loader picks cuDNN {0} ({1}) but a newer copy {2} is installed at {3}",
     "remove the older copy or put {4} first in LD_LIBRARY_PATH; keep one cuDNN per "
     "environment",
     where("version of the cuDNN loaded", "its path", "version of the newest copy installed",
           "that copy's path", "that copy's directory")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "lib.cudnn_copies", "One consistent cuDNN",
    "When several cuDNN copies are installed, the loaded one is the newest and all are built for "
    "the same CUDA major.",
    CheckKind::passive};

struct Copy {
  std::string file;    ///< real path
  std::string version; ///< reported, else from the file name
  std::optional<int64_t> cudart_version;
  /// Only inside a Python environment (pip wheel): the frameworks there load it through their
  /// RUNPATH, programs using the system search do not. Such copies do not compete with the
  /// loaded one, so a difference is a note, not a warning.
  bool private_env = true;
};

/// Copies with distinct real files (symlinks to the same file count once).
std::vector<Copy> distinct_copies(const LibraryFamily& family) {
  std::map<std::string, Copy> by_file;
  for (const LibraryCopy& copy : family.copies) {
    const std::string file = copy.real_path.empty() ? copy.path : copy.real_path;
    Copy& entry = by_file[file];
    entry.file = file;
    if (entry.version.empty()) {
      entry.version = copy.reported_version.value_or(copy.version);
    }
    if (!entry.cudart_version) {
      entry.cudart_version = copy.cudart_version;
    }
    entry.private_env = entry.private_env && copy.origin == "pip";
  }
  std::vector<Copy> copies;
  for (auto& [file, copy] : by_file) {
    copies.push_back(std::move(copy));
  }
  return copies;
}

std::optional<Finding> older_copy_loaded(const LibraryFamily& family,
                                         const std::vector<Copy>& copies) {
  if (!family.load.loaded || family.load.real_path.empty()) {
    return std::nullopt;
  }
  std::string loaded_version = family.load.version;
  for (const Copy& copy : copies) {
    if (copy.file == family.load.real_path && loaded_version.empty()) {
      loaded_version = copy.version;
    }
  }
  if (Version::leading(loaded_version).empty()) {
    return std::nullopt;
  }
  const Copy* newest = nullptr;
  for (const Copy& copy : copies) {
    if (Version::leading(copy.version).empty()) {
      continue;
    }
    if (newest == nullptr ||
        compare_padded(Version::leading(copy.version), Version::leading(newest->version)) > 0) {
      newest = &copy;
    }
  }
  if (newest == nullptr ||
      compare_padded(Version::leading(newest->version), Version::leading(loaded_version)) <= 0) {
    return std::nullopt;
  }
  Finding finding = make_finding(k_lib_cudnn_older_copy_loaded, std::nullopt, loaded_version,
                                 family.load.real_path, newest->version, newest->file,
                                 directory_of(newest->file));
  if (newest->private_env) {
    finding.severity = Severity::info;
  }
  return finding;
}

std::optional<Finding> cuda_major_mix(const SystemSnapshot& s, const LibraryFamily& family,
                                      const std::vector<Copy>& copies) {
  std::set<int64_t> majors;
  std::set<int64_t> shared_majors; // majors of copies that compete on the system search path
  std::vector<std::string> described;
  for (const Copy& copy : copies) {
    std::optional<int64_t> cudart = copy.cudart_version;
    if (!cudart && family.cudnn && copy.file == family.load.real_path) {
      cudart = family.cudnn->cudart_version;
    }
    if (!cudart) {
      continue;
    }
    majors.insert(*cudart / 1000);
    if (!copy.private_env || copy.file == family.load.real_path) {
      shared_majors.insert(*cudart / 1000);
    }
    described.push_back(fmt::format("{} for CUDA {} at {}",
                                    copy.version.empty() ? std::string("?") : copy.version,
                                    cuda_version_text(*cudart), copy.file));
  }
  if (majors.size() < 2) {
    return std::nullopt;
  }
  std::string target;
  if (const LibraryFamily* cudart = s.library("cudart");
      cudart != nullptr && cudart->load.loaded && !Version::leading(cudart->load.version).empty()) {
    target = std::to_string(Version::leading(cudart->load.version).major_number());
  } else if (family.cudnn && family.cudnn->cudart_version) {
    target = std::to_string(*family.cudnn->cudart_version / 1000);
  } else if (const std::optional<int> cuda = driver_cuda_version(s)) {
    target = std::to_string(*cuda / 1000);
  } else {
    target = std::to_string(*majors.rbegin());
  }
  Finding finding = make_finding(k_lib_cudnn_cuda_major_mix, std::nullopt,
                                 fmt::format("{}", fmt::join(described, "; ")), target);
  if (shared_majors.size() < 2) {
    finding.severity = Severity::info; // the mix is only across private Python environments
  }
  return finding;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const LibraryFamily* family = s.library("cudnn");
  if (family == nullptr) {
    return {skip_result(k_info, "cuDNN was not probed")};
  }
  const std::vector<Copy> copies = distinct_copies(*family);
  if (copies.empty()) {
    return {skip_result(k_info, "no cuDNN copy was found on disk")};
  }
  std::vector<Finding> findings;
  if (auto finding = older_copy_loaded(*family, copies)) {
    findings.push_back(std::move(*finding));
  }
  if (auto finding = cuda_major_mix(s, *family, copies)) {
    findings.push_back(std::move(*finding));
  }
  return {make_result(
      k_info, fmt::format("{} on disk", plural(copies.size(), "cuDNN copy", "cuDNN copies")),
      std::move(findings))};
}
} // namespace

CheckDef lib_cudnn_copies_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
