#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <span>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_env_risky_variable{"env.risky_variable"};

constexpr FindingSpec k_findings[] = {
    {k_env_risky_variable, Severity::warn, "Debug or tuning variable set",
     "An environment variable meant for debugging or special set-ups changes how every CUDA "
     "program runs.",
     "{0}={1} is set: {2}",
     "unset {0} unless you are debugging (look in ~/.bashrc, the job script, the container "
     "image's ENV)",
     where("the variable's name", "its value", "what it does")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"env.variables", "No risky CUDA variables",
                           "No debugging or special-purpose CUDA variable is set that slows or "
                           "changes every CUDA program.",
                           CheckKind::passive};

struct RiskyVariable {
  std::string_view name;
  std::string_view value; ///< the risky value (case-insensitive); empty: any non-empty value
  std::string_view why;
};

constexpr RiskyVariable k_risky[] = {
    {"CUDA_LAUNCH_BLOCKING", "1",
     "every kernel launch waits for the kernel to finish, which slows all CUDA work"},
    {"CUDA_INJECTION64_PATH", "",
     "a tool library (profiler, tracer) is injected into every CUDA process"},
    {"CUDA_MODULE_LOADING", "EAGER",
     "every kernel is loaded at start-up: slower start and more memory than lazy loading"},
    {"CUDA_CACHE_DISABLE", "1", "the PTX JIT cache is off: PTX is recompiled at every start"},
    {"CUDA_FORCE_PTX_JIT", "1",
     "embedded GPU binaries are ignored and every kernel is JIT-compiled from PTX"},
    {"CUDA_DISABLE_PTX_JIT", "1",
     "PTX JIT is off: code without a binary for this GPU fails with 'no kernel image'"},
    {"CUDA_DEVICE_WAITS_ON_EXCEPTION", "1",
     "a GPU exception halts the kernel and waits for a debugger to attach"},
    {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "1",
     "a GPU exception writes a GPU core dump (slow, large files)"},
    {"PYTORCH_NO_CUDA_MEMORY_CACHING", "1",
     "PyTorch's caching allocator is off: every allocation goes to the driver, much slower"},
    {"NVIDIA_TF32_OVERRIDE", "0", "TF32 tensor-core math is disabled for every library"},
};

bool equal_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  std::vector<Finding> findings;
  for (const RiskyVariable& risky : k_risky) {
    const std::optional<std::string> value = s.env(std::string(risky.name));
    if (!value || value->empty()) {
      continue;
    }
    if (risky.value.empty() || equal_nocase(*value, risky.value)) {
      findings.push_back(
          make_finding(k_env_risky_variable, std::nullopt, risky.name, *value, risky.why));
    }
  }
  const std::string summary =
      findings.empty() ? std::string("no risky CUDA variable is set")
                       : fmt::format("{} set", plural(findings.size(), "risky variable"));
  return {make_result(k_info, summary, std::move(findings))};
}
} // namespace

CheckDef env_variables_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
