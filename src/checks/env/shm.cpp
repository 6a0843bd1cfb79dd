// env.shm: /dev/shm in a container (F38). Docker gives a container 64 MiB of /dev/shm; NCCL's
// shared-memory transport between local ranks and PyTorch's DataLoader workers need far more
// ("unhandled system error", "bus error ... insufficient shared memory").
#include <fmt/format.h>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_shm_missing{"env.shm_missing"};
constexpr FindingCode k_shm_not_writable{"env.shm_not_writable"};
constexpr FindingCode k_shm_small{"env.shm_small"};

constexpr std::string_view k_container_name =
    "the container runtime (docker, podman, kubernetes, ...)";

constexpr FindingSpec k_findings[] = {
    {k_shm_missing, Severity::warn, "No /dev/shm in the container",
     "The container has no /dev/shm: NCCL's shared-memory transport and PyTorch DataLoader "
     "workers cannot exchange data between processes.",
     "/dev/shm does not exist in this {0} container",
     "start the container with --ipc=host or --shm-size=16g (Kubernetes: mount an emptyDir "
     "with medium: Memory at /dev/shm)",
     where(k_container_name)},
    {k_shm_not_writable, Severity::warn, "/dev/shm not writable",
     "This user cannot write to /dev/shm (it should be mode 1777): NCCL fails with \"shm_open "
     "failed: Permission denied\".",
     "/dev/shm is not writable for this user in this {0} container",
     "make it writable (chmod 1777 /dev/shm in the image or at start), or start the container "
     "with --ipc=host",
     where(k_container_name)},
    {k_shm_small, Severity::warn, "/dev/shm too small",
     "Docker gives a container 64 MiB of /dev/shm; NCCL (between local ranks) and PyTorch "
     "DataLoader workers need far more and fail with \"unhandled system error\", \"No space "
     "left on device\" or bus errors.",
     "/dev/shm holds only {0} in this {1} container, with {2}",
     "start the container with --shm-size=16g (at least {3}) or --ipc=host; Kubernetes: mount "
     "an emptyDir with medium: Memory at /dev/shm; a slower workaround is NCCL_SHM_DISABLE=1",
     where("size of /dev/shm", k_container_name, "what needs more (GPUs, NCCL, DataLoader workers)",
           "the minimum (1024 MiB)")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "env.shm", "Shared memory (/dev/shm)",
    "In a container, /dev/shm is writable and holds at least 1 GiB where several GPUs or NCCL "
    "need it for communication between processes.",
    CheckKind::passive};

constexpr uint64_t k_min_shm_bytes = 1ULL << 30U;

std::string mib(uint64_t bytes) {
  return fmt::format("{} MiB", bytes >> 20U);
}

/// Why shared memory matters here ("2 GPUs", "NCCL 2.28.3"), or "" when nothing needs much.
std::string needs(const SystemSnapshot& s) {
  std::vector<std::string> reasons;
  if (s.gpus.size() > 1) {
    reasons.push_back(fmt::format("{} GPUs", s.gpus.size()));
  }
  const LibraryFamily* nccl = s.library("nccl");
  bool has_nccl = nccl != nullptr && (nccl->load.loaded || !nccl->copies.empty());
  for (const PythonEnvironment& env : s.python_environments) {
    for (const PythonDistribution& dist : env.distributions) {
      has_nccl = has_nccl || dist.name.starts_with("nvidia-nccl");
    }
  }
  if (has_nccl) {
    reasons.emplace_back("NCCL");
  }
  std::string text;
  for (const std::string& reason : reasons) {
    text += (text.empty() ? "" : " and ") + reason;
  }
  return text;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const std::string& kind = s.environment.container.kind;
  if (kind == "none") {
    return {skip_result(k_info, "not running in a container (a host's /dev/shm is half its RAM)")};
  }
  if (!s.environment.shm) {
    // A snapshot from a gpucheck that did not look at /dev/shm.
    return {skip_result(k_info, "/dev/shm was not recorded")};
  }
  const ShmInfo& shm = *s.environment.shm;
  if (shm.source == "absent") {
    return {make_result(k_info, "/dev/shm does not exist",
                        {make_finding(k_shm_missing, std::nullopt, kind)})};
  }
  std::vector<Finding> findings;
  if (shm.writable && !*shm.writable) {
    findings.push_back(make_finding(k_shm_not_writable, std::nullopt, kind));
  }
  if (!shm.total_bytes) {
    return {make_result(k_info, "the size of /dev/shm is unknown", std::move(findings))};
  }
  const std::string why = needs(s);
  if (*shm.total_bytes < k_min_shm_bytes && !why.empty()) {
    findings.push_back(make_finding(k_shm_small, std::nullopt, mib(*shm.total_bytes), kind, why,
                                    mib(k_min_shm_bytes)));
  }
  return {make_result(
      k_info, fmt::format("/dev/shm holds {} in a {} container", mib(*shm.total_bytes), kind),
      std::move(findings))};
}
} // namespace

CheckDef env_shm_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
