// gpu.compute's judge, findings, metrics and registration.
#include <fmt/format.h>

#include "gpu_checks/compute/compute.hpp"
#include "gpu_checks/registry.hpp"

namespace gpucheck::gpu_checks::compute {

namespace {

constexpr FindingSpec k_findings[] = {
    {k_mismatch, Severity::fail, "GPU computed wrong results",
     "A kernel of gpucheck's own, run on fresh random input, gave results that differ from the "
     "CPU reference (FMA chains are compared bit for bit, sums exactly).",
     "GPU {0}: {1}: {2} of {3} wrong, first at [{4}]: got {5}, expected {6}",
     "the GPU is faulty or unstable: read driver.kernel_log's Xid findings, the ECC and "
     "remapped-row "
     "counters (nvidia-smi -q -d ECC,ROW_REMAPPER) and any overclock; run dcgmi diag -r 3 and "
     "have the GPU replaced if it repeats",
     where(k_where_gpu_index, "what was computed and checked (\"sum of N random 32-bit words\")",
           "results wrong", "results checked", "index of the first wrong result",
           "value read there", "value expected"),
     Drain::yes},
    {k_image_fallback, Severity::info, "kernels from an older toolkit's image",
     "gpucheck carries its kernels built by several CUDA toolkits and hands the driver the newest "
     "one that fits its version and the GPU. This driver or GPU needed an older one; that is "
     "normal for an older driver branch or an older GPU, and the kernels are the same.",
     "GPU {0} ({1}): gpucheck's kernels came from its CUDA {2} image ({3}): {4}",
     "nothing to do; a driver of the newest image's branch would load its newest code",
     where(k_where_gpu_index, "GPU model (name)", "the CUDA release that built the image used",
           "how the driver runs it (sass, ptx-jit)",
           "why that image, and why newer ones were passed over")},
    {k_jit_used, Severity::info, "kernels JIT-compiled for this GPU",
     "This gpucheck carries no machine code for the GPU's architecture, so the driver compiled "
     "the PTX just in time. That works, but shows the build predates this GPU.",
     "GPU {0} ({1}) has no SASS in this build ({2}); its kernels were JIT-compiled from PTX",
     "build gpucheck with a CUDA toolkit that supports this architecture",
     where(k_where_gpu_index, "GPU name and compute capability",
           "the architectures the image carries (\"sm_80 compute_90\")")},
};

/// The FMA rate's floor: 0.35 of the FP32 peak, 30% under what healthy H100s and H200s reach
/// (docs/checks.md, "Expected figures").
constexpr checks::DatasheetFloor k_fma_floor{&compat::GpuModelSpec::fp32_tflops, 1000.0, 0.35,
                                             "FP32 {} TFLOPS", true};

constexpr MetricSpec k_metrics[] = {
    {"kernel_load_ms", "ms"},
    {"fp32_fma_gflops", "GFLOP/s", k_fma_floor},
};

constexpr VerifySpec k_verify[] = {{k_verify_kind, k_mismatch}};

constexpr GpuCheck<Payload> k_check{
    {"gpu.compute", "GPU computes correctly",
     "Creates the primary context, loads gpucheck's own kernels and checks FMA chains and an "
     "integer reduction on fresh random input against the CPU, bit for bit; reports GFLOP/s.",
     CheckKind::active},
    "compute",
    "gpu-compute",
    // The FMA chains and the reduction.
    32,
    32,
    32,
    true,
    &work,
    &judge,
    k_findings,
    k_metrics,
    k_verify,
    &amend_setup,
    Listed::first,
};

/// The note that the kernels came from an older toolkit's image (the newest does not fit this
/// driver or GPU), whatever happened after the load.
std::optional<Finding>
image_fallback_note(const checks::GpuTarget& gpu,
                    const std::optional<protocol::KernelModuleReport>& module) {
  if (!module || !module->loaded || !module->fallback) {
    return std::nullopt;
  }
  return make_finding(k_image_fallback, gpu.gpu_index, gpu.gpu_index, gpu.name, module->toolkit,
                      module->route, module->reason);
}
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

void amend_setup(const checks::GpuTarget& gpu, const ChildReport& child, checks::Judgement& setup) {
  if (auto note = image_fallback_note(gpu, child.module)) {
    setup.findings.push_back(std::move(*note));
  }
}

checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& child) {
  const std::optional<protocol::KernelModuleReport>& module = child.module;
  const std::optional<protocol::DeviceDescription>& device = child.device;
  checks::Judgement judgement;
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
        k_jit_used, gpu.gpu_index, gpu.gpu_index,
        fmt::format("{}, sm_{}", gpu.name,
                    device ? fmt::format("{}.{}", device->cc_major, device->cc_minor) : "?"),
        image));
  }
  uint64_t checked = 0;
  for (const protocol::PayloadVerification& v : child.envelope.verify) {
    checked += v.checked;
  }
  judgement.summary =
      fmt::format("GPU {} ({}): {} results checked against the CPU; {:.0f} GFLOP/s FP32 FMA",
                  gpu.gpu_index, device ? device->name : gpu.name, checked, payload.fma_gflops);
  return judgement;
}

} // namespace gpucheck::gpu_checks::compute

namespace gpucheck::gpu_checks {
Registration compute_registration() {
  return registration<compute::k_check>();
}
} // namespace gpucheck::gpu_checks
