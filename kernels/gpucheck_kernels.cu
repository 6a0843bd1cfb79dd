// gpucheck's own GPU kernels. Compiled by the build's nvcc into one fatbin (SASS for every
// architecture the toolkit supports plus the lowest PTX), embedded in the executable and loaded
// through the driver API (src/platform/gpu/kernel_module.cpp). Every kernel is extern "C" with a
// gpucheck_ prefix, bounded (grid-stride loops over a given count) and its output verified by the
// host. Only plain integer/float arithmetic: the PTX must also JIT on future GPUs.

#include <stdint.h>

#include "gpucheck_values.h"

// FMA chains: out[i] = fma(...fma(in[i], a, b)..., a, b), `iterations` times. IEEE fused
// multiply-add is exact-rounded on the GPU and in C's fmaf, so the host reference matches
// bit for bit.
extern "C" __global__ void gpucheck_fma_chain(const float* in, float* out, uint32_t n,
                                              uint32_t iterations, float a, float b) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = in[i];
#pragma unroll 16
    for (uint32_t k = 0; k < iterations; ++k) {
      x = fmaf(x, a, b);
    }
    out[i] = x;
  }
}

// Exact integer reduction: *sum += every in[i] (64-bit, wraps identically on the host).
extern "C" __global__ void gpucheck_reduce_sum(const uint32_t* in, uint32_t n,
                                               unsigned long long* sum) {
  unsigned long long local = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    local += in[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    local += __shfl_down_sync(0xffffffffu, local, offset);
  }
  if ((threadIdx.x & 31u) == 0) {
    atomicAdd(sum, local);
  }
}

// Fill words[0..n) with the pattern for `seed`.
extern "C" __global__ void gpucheck_fill_pattern(uint32_t* words, uint64_t n, uint32_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    words[i] = gpucheck_pattern_word(i, seed);
  }
}

// Count the words that differ from the pattern; record the first bad index (atomicMin).
extern "C" __global__ void gpucheck_check_pattern(const uint32_t* words, uint64_t n, uint32_t seed,
                                                  unsigned long long* mismatches,
                                                  unsigned long long* first_bad) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (words[i] != gpucheck_pattern_word(i, seed)) {
      ++local;
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
  if (local != 0) {
    atomicAdd(mismatches, local);
  }
}

// The copy gate (nvbandwidth's spin kernel): hold the stream until the host writes a non-zero
// latch, or until `timeout_ns` of GPU global time has passed, in which case *timed_out = 1.
extern "C" __global__ void gpucheck_spin_gate(const volatile int* latch, volatile int* timed_out,
                                              uint64_t timeout_ns) {
  uint64_t start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    if (*latch != 0) {
      return;
    }
    uint64_t now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

// words[i] = words[i] * multiplier + addend (mod 2^32): the step a captured graph replays.
extern "C" __global__ void gpucheck_affine_step(uint32_t* words, uint32_t n, uint32_t multiplier,
                                                uint32_t addend) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    words[i] = words[i] * multiplier + addend;
  }
}

// out[0..n) = gpucheck_input_value(i, seed, scale) stored as `type` (gpucheck_values.h): the
// inputs of the cuDNN check, generated where they are used; the host recomputes each one.
extern "C" __global__ void gpucheck_fill_values(void* out, uint64_t n, uint32_t seed, uint32_t type,
                                                float scale) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float v = gpucheck_input_value(i, seed, scale);
    if (type == gpucheck_fp16) {
      static_cast<uint16_t*>(out)[i] = gpucheck_float_to_half(v);
    } else if (type == gpucheck_bf16) {
      static_cast<uint16_t*>(out)[i] = gpucheck_float_to_bf16(v);
    } else {
      static_cast<float*>(out)[i] = v;
    }
  }
}

// *sum += gpucheck_hash_term(words[i], i) over i < n (wrapping): the same sum, whatever the order,
// for the same words in the same places.
extern "C" __global__ void gpucheck_hash_words(const uint32_t* words, uint64_t n,
                                               unsigned long long* sum) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    local += gpucheck_hash_term(words[i], i);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    local += __shfl_down_sync(0xffffffffu, local, offset);
  }
  if ((threadIdx.x & 31u) == 0) {
    atomicAdd(sum, local);
  }
}
