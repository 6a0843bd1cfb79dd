// env.shm: /dev/shm in a container (F38). Docker gives a container 64 MiB of /dev/shm; NCCL's
// shared-memory transport between local ranks and PyTorch's DataLoader workers need far more
// ("unhandled system error", "bus error ... insufficient shared memory").
#include <fmt/format.h>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
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
                        {make_finding(codes::k_env_shm_missing, std::nullopt, kind)})};
  }
  std::vector<Finding> findings;
  if (shm.writable && !*shm.writable) {
    findings.push_back(make_finding(codes::k_env_shm_not_writable, std::nullopt, kind));
  }
  if (!shm.total_bytes) {
    return {make_result(k_info, "the size of /dev/shm is unknown", std::move(findings))};
  }
  const std::string why = needs(s);
  if (*shm.total_bytes < k_min_shm_bytes && !why.empty()) {
    findings.push_back(make_finding(codes::k_env_shm_small, std::nullopt, mib(*shm.total_bytes),
                                    kind, why, mib(k_min_shm_bytes)));
  }
  return {make_result(
      k_info, fmt::format("/dev/shm holds {} in a {} container", mib(*shm.total_bytes), kind),
      std::move(findings))};
}
} // namespace

CheckDef env_shm_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
