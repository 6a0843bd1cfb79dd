#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "checks/rules/long_level.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.memtest", "GPU memory holds every pattern",
    "Long level: writes the classic memory-test patterns (walking ones and zeros, moving "
    "inversions, random data, address in address, modulo-20) into at least 95% of the free "
    "device memory for --duration and checks every word on the GPU; names any word that reads "
    "back wrong.",
    CheckKind::active, Level::long_};

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge_gpu_memtest);
}
} // namespace

Judgement judge_gpu_memtest(const GpuTarget& gpu, const nlohmann::json& payload) {
  // Forced beside other processes that left no memory to test: contention, not a faulty GPU.
  if (const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
      envelope && envelope.value().failure &&
      envelope.value().failure->stage == "memtest allocate" &&
      envelope.value().failure->call.empty() && !gpu.other_processes.empty()) {
    Judgement judgement;
    judgement.skipped = true;
    judgement.summary = fmt::format("GPU {}: not tested beside other processes: {}", gpu.gpu_index,
                                    envelope.value().failure->message);
    return judgement;
  }
  if (std::optional<Judgement> setup = judge_kernel_setup(k_info.title, gpu, payload)) {
    return std::move(*setup);
  }
  const Expected<protocol::MemtestReport> report = protocol::read_memtest(payload);
  if (!report) {
    return unreadable_result(k_info.title, gpu, report.error());
  }
  return judge_memtest(gpu, report.value());
}

CheckDef gpu_memtest_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
