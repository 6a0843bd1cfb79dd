#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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
                     {make_finding(codes::k_lib_cudnn_probe_crashed, std::nullopt, name, how,
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
        {make_finding(codes::k_lib_cudnn_missing, std::nullopt, why, copies_on_disk(*family),
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
        findings.push_back(make_finding(codes::k_lib_cudnn_sublibrary_failed, std::nullopt,
                                        sub.name, dir, problem, family->load.real_path));
      } else if (sub.version_check && *sub.version_check != 0) {
        findings.push_back(make_finding(
            codes::k_lib_cudnn_sublibrary_failed, std::nullopt, sub.name, dir,
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
  return {k_info, &run};
}

} // namespace gpucheck::checks
