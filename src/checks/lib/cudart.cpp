#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/probe_failure.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_lib_cudart_not_found{"lib.cudart_not_found"};

constexpr FindingSpec k_findings[] = {
    {k_lib_cudart_not_found, Severity::info, "No shared CUDA runtime on the loader path",
     "No libcudart is loadable by its bare name; applications usually bundle their own.",
     "no CUDA runtime is loadable by its bare name ({0})",
     "nothing to do unless a program expects the system's libcudart: then install the CUDA "
     "runtime (NVIDIA's package cuda-cudart-<major>-<minor>, named alike for apt, dnf and "
     "zypper) or add its directory to LD_LIBRARY_PATH",
     where("the loader's error")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"lib.cudart", "CUDA runtime",
                           "Which shared CUDA runtime (libcudart) the loader finds by its bare "
                           "name, and what version it reports.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const LibraryFamily* cudart = context.snapshot.library("cudart");
  if (cudart == nullptr) {
    return {skip_result(k_info, "the CUDA runtime was not probed")};
  }
  if (cudart->failure) {
    return {
        probe_failure_result(k_info, "CUDA runtime probe (dlopen libcudart)", *cudart->failure)};
  }
  if (!cudart->load.loaded && cudart->load.name.empty() && cudart->load.error.empty()) {
    // A probe that tried to load the library records the name it asked for.
    return {skip_result(k_info, "no load of the CUDA runtime was attempted")};
  }
  if (!cudart->load.loaded) {
    const std::string why = cudart->load.error.empty()
                                ? fmt::format("{}: not found", cudart->load.name)
                                : cudart->load.error;
    return {make_result(k_info, "no shared CUDA runtime on the loader path",
                        {make_finding(k_lib_cudart_not_found, std::nullopt, why)})};
  }
  const std::string file =
      cudart->load.real_path.empty() ? cudart->load.path : cudart->load.real_path;
  const std::string version =
      cudart->load.version.empty() ? std::string("(version unknown)") : cudart->load.version;
  return {make_result(k_info, fmt::format("CUDA runtime {} from {}", version, file), {})};
}
} // namespace

CheckDef lib_cudart_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
