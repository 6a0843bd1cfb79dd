#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/lib/cudnn_status.hpp"
#include "checks/rules/packages.hpp"
#include "checks/rules/path_text.hpp"
#include "checks/rules/probe_failure.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_lib_cudnn_missing{"lib.cudnn_missing"};
constexpr FindingCode k_lib_cudnn_probe_crashed{"lib.cudnn_probe_crashed"};
constexpr FindingCode k_lib_cudnn_sublibrary_failed{"lib.cudnn_sublibrary_failed"};

constexpr FindingSpec k_findings[] = {
    {k_lib_cudnn_missing, Severity::warn, "cuDNN not found",
     "No cuDNN library is loadable by its bare name.", "cuDNN is not loadable ({0}){1}",
     "install cuDNN for CUDA {2}: {3}; if it is installed in a directory the loader does not "
     "search, add that directory to LD_LIBRARY_PATH",
     where("the loader's error", "\"; copies on disk: ...\" (path and origin of each), or empty",
           "the CUDA major to install cuDNN for",
           "the command for this distribution (apt: sudo apt install libcudnn9-cuda-13; else "
           "NVIDIA's repository for it), or pip install nvidia-cudnn-cu13")},
    {k_lib_cudnn_probe_crashed, Severity::fail, "cuDNN crashed while loading",
     "cuDNN aborts the process when a sub-library is missing or has another version, so the "
     "probe that loaded it crashed.",
     "loading cuDNN ({0}) ended with {1}; stderr: {2}",
     "make sure every libcudnn_*.so.9 sub-library sits in {3} next to the shim and comes from "
     "the same cuDNN release; reinstall cuDNN",
     where("the cuDNN library loaded (\"libcudnn.so.9\")", "how it ended (signal or status)",
           k_where_stderr, "the cuDNN directory")},
    {k_lib_cudnn_sublibrary_failed, Severity::fail, "cuDNN sub-library broken",
     "A cuDNN sub-library is missing, cannot be loaded, or is from another cuDNN release than "
     "the shim.",
     "cuDNN sub-library {0} in {1} {2}",
     "reinstall cuDNN so every libcudnn*.so.9 in {1} comes from one release (the shim loaded is "
     "{3}); remove stray copies from other releases",
     where("the sub-library (\"libcudnn_ops.so.9\")", "its directory",
           "what is wrong (cannot be loaded, fails its version check)",
           "path of the cuDNN shim loaded")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"lib.cudnn", "cuDNN loads",
                           "cuDNN loads by its bare name and every sub-library loads and passes "
                           "its version check.",
                           CheckKind::passive};

/// Where cuDNN lives: the loaded shim's directory, else the selected copy's.
std::string cudnn_directory(const LibraryFamily& family) {
  if (!family.load.real_path.empty()) {
    return directory_of(family.load.real_path);
  }
  for (const LibraryCopy& copy : family.copies) {
    if (copy.selected) {
      return directory_of(copy.real_path.empty() ? copy.path : copy.real_path);
    }
  }
  return "the cuDNN directory";
}

CheckResult probe_crashed(const LibraryFamily& family) {
  const ChildFailure& failure = *family.failure;
  if (failure.kind != ChildFailureKind::signal && failure.kind != ChildFailureKind::exit) {
    return probe_failure_result(k_info, "cuDNN probe (dlopen libcudnn, cudnnGetVersion)", failure);
  }
  const std::string how =
      failure.kind == ChildFailureKind::signal
          ? (failure.signal_name.empty() ? fmt::format("signal {}", failure.signal)
                                         : failure.signal_name)
          : fmt::format("exit code {}", failure.exit_code);
  const std::string name =
      family.load.name.empty() ? std::string("libcudnn.so.9") : family.load.name;
  return make_result(k_info, fmt::format("loading cuDNN crashed with {}", how),
                     {make_finding(k_lib_cudnn_probe_crashed, std::nullopt, name, how,
                                   stderr_excerpt(failure), cudnn_directory(family))});
}

std::string copies_on_disk(const LibraryFamily& family) {
  std::vector<std::string> paths;
  for (const LibraryCopy& copy : family.copies) {
    paths.push_back(fmt::format("{} ({})", copy.path, copy.origin));
  }
  return paths.empty() ? std::string()
                       : fmt::format("; copies on disk: {}", fmt::join(paths, ", "));
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const LibraryFamily* family = s.library("cudnn");
  if (family == nullptr) {
    return {skip_result(k_info, "cuDNN was not probed")};
  }
  if (family->failure) {
    return {probe_crashed(*family)};
  }
  if (!family->load.loaded && family->load.name.empty() && family->load.error.empty()) {
    // A probe that tried to load the library records the name it asked for.
    return {skip_result(k_info, "no load of cuDNN was attempted")};
  }
  if (!family->load.loaded) {
    const std::string why = family->load.error.empty()
                                ? fmt::format("{}: not found", family->load.name)
                                : family->load.error;
    return {make_result(
        k_info, "cuDNN is not loadable",
        {make_finding(k_lib_cudnn_missing, std::nullopt, why, copies_on_disk(*family),
                      cuda_major_text(s), cudnn_install(s.host.os, cuda_major_text(s)))})};
  }
  std::vector<Finding> findings;
  std::size_t sublibraries = 0;
  if (family->cudnn) {
    for (const CudnnSublibrary& sub : family->cudnn->sublibraries) {
      ++sublibraries;
      const std::string dir = sub.path.empty() ? cudnn_directory(*family) : directory_of(sub.path);
      if (!sub.loaded) {
        const std::string problem = sub.error.empty()
                                        ? std::string("cannot be loaded")
                                        : fmt::format("cannot be loaded: {}", sub.error);
        findings.push_back(make_finding(k_lib_cudnn_sublibrary_failed, std::nullopt, sub.name, dir,
                                        problem, family->load.real_path));
      } else if (sub.version_check && *sub.version_check != 0) {
        findings.push_back(make_finding(
            k_lib_cudnn_sublibrary_failed, std::nullopt, sub.name, dir,
            fmt::format("fails its version check: {}", cudnn_status_text(*sub.version_check)),
            family->load.real_path));
      }
    }
  }
  const std::string version =
      family->load.version.empty() ? std::string("(version unknown)") : family->load.version;
  // --quick loads the core sub-library only and makes no version check (cuDNN 9's initialises
  // CUDA): say what was left out instead of counting less.
  const bool shallow =
      context.options.quick && family->cudnn &&
      std::none_of(family->cudnn->sublibraries.begin(), family->cudnn->sublibraries.end(),
                   [](const CudnnSublibrary& sub) { return sub.version_check.has_value(); });
  const std::string checked =
      shallow ? fmt::format("{} loaded; --quick looked for the others on disk only and made no "
                            "version check (a standard run loads and checks them all)",
                            plural(sublibraries, "sub-library", "sub-libraries"))
              : fmt::format("{} checked", plural(sublibraries, "sub-library", "sub-libraries"));
  return {make_result(k_info,
                      fmt::format("cuDNN {} from {}; {}", version, family->load.real_path, checked),
                      std::move(findings))};
}
} // namespace

CheckDef lib_cudnn_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
