// gpu.compute's child side: does the GPU compute correctly, and how fast (FP32 FMA throughput)?
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/compute/compute.hpp"

namespace gpucheck::gpu_checks::compute {

namespace {
using gpu::CudaApi;
using gpu::DeviceBuffer;
using gpu::DeviceSession;
using gpu::Event;
using gpu::Kernels;
using gpu::SplitMix64;
using gpu::Stream;
using Verification = protocol::PayloadVerification;
constexpr unsigned k_block = 256;
constexpr uint32_t k_verify_elements = 1U << 19; // 2x the threads an H200 holds at once
constexpr uint32_t k_verify_iterations = 16;
constexpr uint32_t k_rate_elements = 1U << 21;
constexpr uint32_t k_rate_iterations = 4096;
constexpr uint32_t k_rate_samples = 1024;
constexpr int k_rate_repeats = 5;
constexpr uint32_t k_reduce_elements = 1U << 22;
constexpr uint32_t k_poison = 0xFFBADBADU; // a NaN: never a result of the FMA chain

float host_chain(float x, uint32_t iterations, float a, float b) {
  for (uint32_t k = 0; k < iterations; ++k) {
    x = std::fma(x, a, b);
  }
  return x;
}

std::string float_text(float value) {
  return fmt::format("{:.9g} (0x{:08X})", value, std::bit_cast<uint32_t>(value));
}

/// One FMA-chain job on the GPU: fresh random input copied up, a poisoned output, and the
/// kernel's arguments (launch() may be called repeatedly; the job must not move).
class FmaJob {
public:
  FmaJob(const DeviceSession& session, const Stream& stream, SplitMix64& rng, uint32_t elements,
         uint32_t steps, float a_min, float a_max, float b_half_range)
      : m_session(session), m_stream(stream), a(rng.uniform(a_min, a_max)),
        b(rng.uniform(-b_half_range, b_half_range)), n(elements), iterations(steps),
        input(elements), d_in(session, uint64_t{elements} * 4),
        d_out(session, uint64_t{elements} * 4) {
    for (float& x : input) {
      x = rng.uniform(-1.0F, 1.0F);
    }
    const CudaApi& api = session.api();
    GPUCHECK_CU(api, cuMemcpyHtoDAsync, d_in.get(), input.data(), size_t{n} * 4, stream.get());
    GPUCHECK_CU(api, cuMemsetD32Async, d_out.get(), k_poison, size_t{n}, stream.get());
    m_in = d_in.get();
    m_out = d_out.get();
  }

  void launch(const Kernels& k, unsigned grid) {
    gpu::launch(m_session.api(), k.fma_chain, grid, k_block, m_stream.get(),
                {&m_in, &m_out, &n, &iterations, &a, &b});
  }

  /// The outputs, copied back after everything queued on the stream.
  std::vector<float> results() const {
    std::vector<float> result(n);
    GPUCHECK_CU(m_session.api(), cuMemcpyDtoHAsync, result.data(), d_out.get(), size_t{n} * 4,
                m_stream.get());
    m_stream.synchronize();
    return result;
  }

private:
  const DeviceSession& m_session;
  const Stream& m_stream;
  CUdeviceptr m_in = 0;
  CUdeviceptr m_out = 0;

public:
  float a;
  float b;
  uint32_t n;
  uint32_t iterations;
  std::vector<float> input;
  DeviceBuffer d_in;
  DeviceBuffer d_out;
};

void fma_verification(const DeviceSession& session, const Kernels& k, const Stream& stream,
                      SplitMix64& rng, Output<Payload>& out) {
  const CudaApi& api = session.api();
  gpu::set_stage("fma verification");
  FmaJob job(session, stream, rng, k_verify_elements, k_verify_iterations, 0.9F, 1.1F, 0.5F);
  job.launch(k, gpu::grid_for(session, job.n, k_block));
  if (gpu::fault_planted("compute")) {
    const uint64_t victim = rng.next() % job.n;
    GPUCHECK_CU(api, cuMemsetD32Async, job.d_out.get() + victim * 4, 0x3F800000U ^ 0x5A5AU,
                size_t{1}, stream.get());
  }
  const std::vector<float> result = job.results();
  const uint32_t n = job.n;
  const uint32_t iterations = job.iterations;
  const std::vector<float>& input = job.input;
  const float a = job.a;
  const float b = job.b;
  Verification v{std::string(k_verify_kind),
                 fmt::format("{} FMA chains of {} steps vs CPU fmaf", n, iterations)};
  for (uint32_t i = 0; i < n; ++i) {
    const float want = host_chain(input[i], iterations, a, b);
    ++v.checked;
    if (std::bit_cast<uint32_t>(result[i]) != std::bit_cast<uint32_t>(want)) {
      if (v.mismatches++ == 0) {
        v.first_index = i;
        v.got = float_text(result[i]);
        v.want = float_text(want);
      }
    }
  }
  out.verify.push_back(std::move(v));
}

void fma_rate(const DeviceSession& session, const Kernels& k, const Stream& stream, SplitMix64& rng,
              Output<Payload>& out) {
  const CudaApi& api = session.api();
  gpu::set_stage("fma throughput");
  FmaJob job(session, stream, rng, k_rate_elements, k_rate_iterations, 0.99F, 1.0F, 0.01F);
  const uint32_t n = job.n;
  const uint32_t iterations = job.iterations;
  const std::vector<float>& input = job.input;
  const float a = job.a;
  const float b = job.b;
  const unsigned grid = gpu::grid_for(session, n, k_block);
  std::vector<double> ms;
  Event start(session);
  Event end(session);
  {
    const auto quiet = session.quiet(); // nothing of cuDNN's lane inside the timed window
    // One untimed launch (clocks up, instruction cache warm), then timed repeats.
    job.launch(k, grid);
    for (int r = 0; r < k_rate_repeats; ++r) {
      start.record(stream.get());
      job.launch(k, grid);
      end.record(stream.get());
      ms.push_back(gpu::elapsed_ms(api, start, end));
    }
  }
  const double flops = 2.0 * n * static_cast<double>(iterations);
  out.payload.fma_gflops = flops / (gpu::median(ms) * 1e-3) / 1e9;
  out.payload.fma_chains = n;
  out.payload.fma_steps = iterations;
  out.metrics.push_back(
      {"fp32_fma_gflops", out.payload.fma_gflops, "GFLOP/s",
       fmt::format("median of {}, {} chains x {} FMA", k_rate_repeats, n, iterations)});
  const std::vector<float> result = job.results();
  // Every element written (no poison left); a random sample recomputed exactly on the CPU.
  Verification v{std::string(k_verify_kind),
                 fmt::format("{} throughput outputs written, {} recomputed", n, k_rate_samples)};
  for (uint32_t i = 0; i < n; ++i) {
    if (std::bit_cast<uint32_t>(result[i]) == k_poison) {
      if (v.mismatches++ == 0) {
        v.first_index = i;
        v.got = "unwritten (poison)";
        v.want = "a result";
      }
    }
  }
  for (uint32_t s = 0; s < k_rate_samples; ++s) {
    const uint32_t i = static_cast<uint32_t>(rng.next() % n);
    const float want = host_chain(input[i], iterations, a, b);
    if (std::bit_cast<uint32_t>(result[i]) != std::bit_cast<uint32_t>(want)) {
      if (v.mismatches++ == 0) {
        v.first_index = i;
        v.got = float_text(result[i]);
        v.want = float_text(want);
      }
    }
  }
  v.checked = n;
  out.verify.push_back(std::move(v));
}

void reduction(const DeviceSession& session, const Kernels& k, const Stream& stream,
               SplitMix64& rng, Output<Payload>& out) {
  const CudaApi& api = session.api();
  gpu::set_stage("reduction");
  const uint32_t n = k_reduce_elements;
  std::vector<uint32_t> input(n);
  uint64_t want = 0;
  for (uint32_t& x : input) {
    x = static_cast<uint32_t>(rng.next());
    want += x;
  }
  DeviceBuffer d_in(session, uint64_t{n} * 4);
  DeviceBuffer d_sum(session, 8);
  GPUCHECK_CU(api, cuMemcpyHtoDAsync, d_in.get(), input.data(), size_t{n} * 4, stream.get());
  GPUCHECK_CU(api, cuMemsetD32Async, d_sum.get(), 0U, size_t{2}, stream.get());
  CUdeviceptr in_ptr = d_in.get();
  CUdeviceptr sum_ptr = d_sum.get();
  uint32_t count = n;
  gpu::launch(api, k.reduce_sum, gpu::grid_for(session, n, k_block), k_block, stream.get(),
              {&in_ptr, &count, &sum_ptr});
  uint64_t got = 0;
  GPUCHECK_CU(api, cuMemcpyDtoHAsync, &got, d_sum.get(), size_t{8}, stream.get());
  stream.synchronize();
  Verification v{std::string(k_verify_kind), fmt::format("sum of {} random 32-bit words", n)};
  v.checked = 1;
  if (got != want) {
    v.mismatches = 1;
    v.got = std::to_string(got);
    v.want = std::to_string(want);
  }
  out.verify.push_back(std::move(v));
}
} // namespace

void work(DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out) {
  session.wait_for_gate();
  // The note names the image and how it ran ("cuda12.9 sass"): the report shows which one loaded.
  const protocol::KernelModuleReport& load = module.load_report();
  out.metrics.push_back({"kernel_load_ms", load.load_ms.value_or(0.0), "ms",
                         fmt::format("{} {}", load.image_name, load.route)});
  SplitMix64 rng(gpu::fresh_seed());
  Stream stream(session);
  fma_verification(session, module.kernels(), stream, rng, out);
  reduction(session, module.kernels(), stream, rng, out);
  fma_rate(session, module.kernels(), stream, rng, out);
  session.done_with_gpu();
}

} // namespace gpucheck::gpu_checks::compute
