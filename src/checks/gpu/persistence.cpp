#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_persistence_off{"gpu.persistence_off"};

constexpr FindingSpec k_findings[] = {
    {k_persistence_off, Severity::warn, "Persistence mode off",
     "Without persistence mode the driver tears the GPU down when the last process exits, so "
     "every new process pays the initialisation time again.",
     "persistence mode is off on GPU {0}",
     "enable the persistence daemon: sudo systemctl enable --now nvidia-persistenced (or sudo "
     "nvidia-smi -i {1} -pm 1)",
     where(k_where_gpu, "GPU index, for nvidia-smi -i")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"gpu.persistence", "Persistence mode",
                           "Persistence mode is on, so the driver stays initialised between "
                           "processes.",
                           CheckKind::passive};

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot& s) {
  if (!gpu.persistence_mode) {
    return skip_result(info, "persistence mode is not reported for this GPU", gpu.index);
  }
  if (*gpu.persistence_mode) {
    return make_result(info, "persistence mode is on", {}, gpu.index);
  }
  // Policy (docs/checks.md): a multi-GPU host pays the start-up cost on every job and can fix
  // it; on one GPU, in a container (where it cannot be changed) or under WSL it is a note.
  const bool host = s.environment.container.kind == "none" && !s.environment.wsl;
  const Severity severity = host && s.gpus.size() > 1 ? Severity::warn : Severity::info;
  return make_result(
      info, "persistence mode is off",
      {make_finding_as(severity, k_persistence_off, gpu.index, gpu_label(gpu), gpu.index)},
      gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_persistence_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
