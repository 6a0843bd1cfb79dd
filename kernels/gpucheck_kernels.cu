// gpucheck's own GPU kernels. Compiled by the build's nvcc into one fatbin (SASS for every
// architecture the toolkit supports plus the lowest PTX), embedded in the executable and loaded
// through the driver API (src/gpu/kernel_module.cpp). Every kernel is extern "C" with a
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
    } else if (type == gpucheck_fp64) {
      static_cast<double*>(out)[i] = static_cast<double>(v);
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

// The memory test's passes over one chunk of n4 groups of four words (16 bytes, so each thread
// moves a full vector), whose first word is word `first` of the whole tested range.
__device__ __forceinline__ void gpucheck_memtest_values(uint32_t out[4], uint32_t kind,
                                                        uint64_t index, uint64_t address,
                                                        uint32_t a, uint32_t b) {
  for (uint32_t c = 0; c < 4; ++c) {
    out[c] = gpucheck_memtest_word(kind, index + c, address + 4U * c, a, b);
  }
}

// Write every word of the chunk.
extern "C" __global__ void gpucheck_memtest_write(uint4* words, uint64_t n4, uint64_t first,
                                                  uint32_t kind, uint32_t a, uint32_t b) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t v[4];
    gpucheck_memtest_values(v, kind, first + 4U * i, reinterpret_cast<uint64_t>(words + i), a, b);
    words[i] = make_uint4(v[0], v[1], v[2], v[3]);
  }
}

// Check every word of the chunk against (kind, a, b), recording the bad ones; then, when
// `rewrite` is set, write (kind2, a2, b2) in the same pass (moving inversions, and each step of
// walking ones to the next).
extern "C" __global__ void gpucheck_memtest_check(uint4* words, uint64_t n4, uint64_t first,
                                                  uint32_t kind, uint32_t a, uint32_t b,
                                                  uint32_t rewrite, uint32_t kind2, uint32_t a2,
                                                  uint32_t b2, GpucheckMemtestErrors* errors) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint4 got4 = words[i];
    const uint32_t got[4] = {got4.x, got4.y, got4.z, got4.w};
    const uint64_t address = reinterpret_cast<uint64_t>(words + i);
    uint32_t want[4];
    gpucheck_memtest_values(want, kind, first + 4U * i, address, a, b);
    for (uint32_t c = 0; c < 4; ++c) {
      if (got[c] != want[c]) {
        const unsigned long long slot = atomicAdd(&errors->count, 1ULL);
        if (slot < GPUCHECK_MEMTEST_RECORDED) {
          errors->address[slot] = address + 4U * c;
          errors->expected[slot] = want[c];
          errors->observed[slot] = got[c];
        }
      }
    }
    if (rewrite != 0) {
      uint32_t v[4];
      gpucheck_memtest_values(v, kind2, first + 4U * i, address, a2, b2);
      words[i] = make_uint4(v[0], v[1], v[2], v[3]);
    }
  }
}

// *mismatches += the number of words where a and b differ (the burn's iterations against the
// first one's result).
extern "C" __global__ void gpucheck_compare_words(const uint4* a, const uint4* b, uint64_t n4,
                                                  unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint4 x = a[i];
    const uint4 y = b[i];
    local += (x.x != y.x) + (x.y != y.y) + (x.z != y.z) + (x.w != y.w);
  }
  if (local != 0) {
    atomicAdd(mismatches, local);
  }
}

// Rank `rank`'s inputs of the verified all-reduce, from element `first` on.
extern "C" __global__ void gpucheck_nccl_fill(float* out, uint64_t n, uint64_t first, uint32_t rank,
                                              uint32_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = gpucheck_nccl_value(first + i, rank, seed);
  }
}

// Count the sums that differ from every rank's value added up; record the first bad index.
extern "C" __global__ void gpucheck_nccl_check(const float* sums, uint64_t n, uint32_t ranks,
                                               uint32_t seed, unsigned long long* mismatches,
                                               unsigned long long* first_bad) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    float want = 0.0F;
    for (uint32_t r = 0; r < ranks; ++r) {
      want += gpucheck_nccl_value(i, r, seed);
    }
    if (sums[i] != want) {
      ++local;
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
  if (local != 0) {
    atomicAdd(mismatches, local);
  }
}

// Count the ReLU outputs that differ from max(input, 0), the input being
// gpucheck_input_value(i, seed, scale) as gpucheck_fill_values wrote it; record the first bad
// index. ReLU is exact, so the comparison is too.
extern "C" __global__ void gpucheck_relu_check(const float* y, uint64_t n, uint32_t seed,
                                               float scale, unsigned long long* mismatches,
                                               unsigned long long* first_bad) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float in = gpucheck_input_value(i, seed, scale);
    const float want = in > 0.0F ? in : 0.0F;
    if (y[i] != want) {
      ++local;
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
  if (local != 0) {
    atomicAdd(mismatches, local);
  }
}
