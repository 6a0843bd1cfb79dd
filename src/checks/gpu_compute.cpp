#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/gpu_checks.hpp"
#include "gpucheck/finding_catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.compute", "GPU computes correctly",
    "Creates the primary context, loads gpucheck's own kernels and checks FMA chains and an "
    "integer reduction on fresh random input against the CPU, bit for bit; reports GFLOP/s.",
    CheckKind::active};

double metric_value(const nlohmann::json& payload, const std::string& name) {
  for (const nlohmann::json& m : payload.value("metrics", nlohmann::json::array())) {
    if (m.value("name", "") == name) {
      return m.value("value", 0.0);
    }
  }
  return 0.0;
}

Judgement judge(const GpuTarget& gpu, const nlohmann::json& payload) {
  if (std::optional<Judgement> setup = judge_kernel_setup(gpu, payload)) {
    return std::move(*setup);
  }
  Judgement judgement;
  const nlohmann::json& module = payload.value("module", nlohmann::json::object());
  if (module.value("route", "") == "ptx-jit") {
    std::string image;
    for (const nlohmann::json& entry : module.value("image", nlohmann::json::array())) {
      image += image.empty() ? "" : " ";
      image += entry.get<std::string>();
    }
    judgement.findings.push_back(make_finding(
        "gpu.kernel_jit_used", gpu.gpu_index, gpu.gpu_index,
        fmt::format("{}, sm_{}", gpu.name,
                    payload.value("device", nlohmann::json::object()).value("cc", "?")),
        image));
  }
  uint64_t checked = 0;
  for (const nlohmann::json& v : payload.value("verify", nlohmann::json::array())) {
    checked += v.value("checked", uint64_t{0});
  }
  judgement.summary = fmt::format(
      "GPU {} ({}): {} results checked against the CPU; {:.0f} GFLOP/s FP32 FMA", gpu.gpu_index,
      payload["device"].value("name", gpu.name), checked, metric_value(payload, "fp32_fma_gflops"));
  return judgement;
}

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge);
}
} // namespace

CheckDef gpu_compute_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
