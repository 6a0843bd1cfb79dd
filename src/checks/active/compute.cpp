#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.compute", "GPU computes correctly",
    "Creates the primary context, loads gpucheck's own kernels and checks FMA chains and an "
    "integer reduction on fresh random input against the CPU, bit for bit; reports GFLOP/s.",
    CheckKind::active};

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge_gpu_compute);
}
} // namespace

namespace {
/// The note that the kernels came from an older toolkit's image (the newest does not fit this
/// driver or GPU), whatever happened after the load.
std::optional<Finding>
image_fallback_note(const GpuTarget& gpu,
                    const std::optional<protocol::KernelModuleReport>& module) {
  if (!module || !module->loaded || !module->fallback) {
    return std::nullopt;
  }
  return make_finding(codes::k_gpu_kernel_image_fallback, gpu.gpu_index, gpu.gpu_index, gpu.name,
                      module->toolkit, module->route, module->reason);
}
} // namespace

Judgement judge_gpu_compute(const GpuTarget& gpu, const nlohmann::json& payload) {
  if (std::optional<Judgement> setup = judge_kernel_setup(k_info.title, gpu, payload)) {
    if (const auto module = protocol::read_kernel_module(payload); module) {
      if (auto note = image_fallback_note(gpu, module.value())) {
        setup->findings.push_back(std::move(*note));
      }
    }
    return std::move(*setup);
  }
  // judge_kernel_setup() has read the envelope, the module and the device without error.
  const protocol::ChildEnvelope envelope = protocol::read_envelope(payload).value();
  const std::optional<protocol::KernelModuleReport> module =
      protocol::read_kernel_module(payload).value();
  const std::optional<protocol::DeviceDescription> device = protocol::read_device(payload).value();
  Judgement judgement;
  if (auto note = image_fallback_note(gpu, module)) {
    judgement.findings.push_back(std::move(*note));
  }
  // Under CUDA_FORCE_PTX_JIT=1 the JIT is asked for, not a sign of a build older than the GPU.
  if (module && module->route == "ptx-jit" &&
      module->reason.find("CUDA_FORCE_PTX_JIT") == std::string::npos) {
    std::string image;
    for (const std::string& entry : module->image) {
      image += image.empty() ? "" : " ";
      image += entry;
    }
    judgement.findings.push_back(make_finding(
        codes::k_gpu_kernel_jit_used, gpu.gpu_index, gpu.gpu_index,
        fmt::format("{}, sm_{}", gpu.name,
                    device ? fmt::format("{}.{}", device->cc_major, device->cc_minor) : "?"),
        image));
  }
  uint64_t checked = 0;
  for (const protocol::PayloadVerification& v : envelope.verify) {
    checked += v.checked;
  }
  double gflops = 0.0;
  for (const protocol::PayloadMetric& m : envelope.metrics) {
    if (m.name == "fp32_fma_gflops") {
      gflops = m.value;
    }
  }
  judgement.summary =
      fmt::format("GPU {} ({}): {} results checked against the CPU; {:.0f} GFLOP/s FP32 FMA",
                  gpu.gpu_index, device ? device->name : gpu.name, checked, gflops);
  return judgement;
}

CheckDef gpu_compute_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
