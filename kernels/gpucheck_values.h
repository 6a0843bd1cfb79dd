// Values that gpucheck's kernels generate and its host code recomputes as the reference: one
// definition, compiled by nvcc for the kernels and by the host compiler for the checks, so the two
// agree bit for bit. Plain integer and float arithmetic only.
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define GPUCHECK_HD __host__ __device__ __forceinline__
#else
#define GPUCHECK_HD inline
#endif

// A cheap hash of (index, seed): every word differs, so a misplaced or dropped chunk shows.
GPUCHECK_HD uint32_t gpucheck_pattern_word(uint64_t index, uint32_t seed) {
  uint32_t x = static_cast<uint32_t>(index) * 0x9E3779B1u ^ seed;
  x ^= static_cast<uint32_t>(index >> 32) * 0x85EBCA77u;
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// The value NCCL rank `rank` sends at `index` in the verified all-reduce: an integer 0-255, so
// every sum is exact in float32 whatever NCCL's order, and each rank sends other values, so a
// misplaced chunk reads wrong. One multiply per element.
GPUCHECK_HD float gpucheck_nccl_value(uint64_t index, uint32_t rank, uint32_t seed) {
  const uint32_t key = static_cast<uint32_t>(index) + rank * 40503u + seed;
  return static_cast<float>((key * 2654435761u) >> 24u);
}

GPUCHECK_HD uint32_t gpucheck_float_bits(float value) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(value);
#else
  uint32_t bits = 0;
  __builtin_memcpy(&bits, &value, 4);
  return bits;
#endif
}

// The input value for element `index`: (pattern >> 8) * 2^-23 - 1, in [-1, 1), times `scale` (a
// power of two). Every step is exact in FP32, so contraction or rounding mode cannot change it.
GPUCHECK_HD float gpucheck_input_value(uint64_t index, uint32_t seed, float scale) {
  return scale * (static_cast<float>(gpucheck_pattern_word(index, seed) >> 8) * 0x1.0p-23F - 1.0F);
}

// FP32 -> FP16 bits, round to nearest even (inputs here are finite).
GPUCHECK_HD uint16_t gpucheck_float_to_half(float value) {
  const uint32_t x = gpucheck_float_bits(value);
  const uint32_t sign = (x >> 16) & 0x8000U;
  const int exponent = static_cast<int>((x >> 23) & 0xFFU) - 127 + 15;
  uint32_t mantissa = x & 0x7FFFFFU;
  if (exponent <= 0) { // subnormal or zero
    if (exponent < -10) {
      return static_cast<uint16_t>(sign);
    }
    mantissa |= 0x800000U;
    const int shift = 14 - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1U << shift) - 1);
    const uint32_t halfway = 1U << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1U))) {
      ++half;
    }
    return static_cast<uint16_t>(sign | half);
  }
  if (exponent >= 31) {
    return static_cast<uint16_t>(sign | 0x7C00U);
  }
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1FFFU;
  if (rest > 0x1000U || (rest == 0x1000U && (half & 1U))) {
    ++half;
  }
  return static_cast<uint16_t>(sign | half);
}

// FP32 -> BF16 bits, round to nearest even (inputs here are finite).
GPUCHECK_HD uint16_t gpucheck_float_to_bf16(float value) {
  const uint32_t x = gpucheck_float_bits(value);
  return static_cast<uint16_t>((x + 0x7FFFU + ((x >> 16) & 1U)) >> 16);
}

// Element types of gpucheck_fill_values.
enum GpucheckValueType : uint32_t {
  gpucheck_fp32 = 0,
  gpucheck_fp16 = 1,
  gpucheck_bf16 = 2,
  gpucheck_fp64 = 3
};

// One term of an order-independent 64-bit hash of a word array: word and position mixed.
GPUCHECK_HD uint64_t gpucheck_hash_term(uint32_t word, uint64_t index) {
  uint64_t z = (static_cast<uint64_t>(word) << 1 | 1U) ^ (index * 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The memory test's word values (src/gpu/memtest.cpp; the classic patterns of
// memtest86 and cuda_memtest). A pass writes, or checks, every word of the tested range as
// gpucheck_memtest_word(kind, index, address, a, b): `index` is the word's position in the whole
// range (all chunks), `address` its device address.
enum GpucheckMemtestKind : uint32_t {
  gpucheck_mt_constant = 0, // a (walking ones and zeros, moving inversions)
  gpucheck_mt_random = 1,   // the pattern hash of (index, a), xor b
  gpucheck_mt_address = 2,  // the word's own address (low 32 bits), xor b: address in address
  gpucheck_mt_modulo = 3,   // b where index % 20 == a, ~b elsewhere (modulo-20)
};

GPUCHECK_HD uint32_t gpucheck_memtest_word(uint32_t kind, uint64_t index, uint64_t address,
                                           uint32_t a, uint32_t b) {
  if (kind == gpucheck_mt_random) {
    return gpucheck_pattern_word(index, a) ^ b;
  }
  if (kind == gpucheck_mt_address) {
    return static_cast<uint32_t>(address) ^ b;
  }
  if (kind == gpucheck_mt_modulo) {
    return index % 20U == a ? b : ~b;
  }
  return a;
}

// Where the memory test's kernels record bad words: the count of all, the first
// GPUCHECK_MEMTEST_RECORDED of them. The host reads it back with one copy.
#define GPUCHECK_MEMTEST_RECORDED 32
struct GpucheckMemtestErrors {
  unsigned long long count;
  unsigned long long address[GPUCHECK_MEMTEST_RECORDED];
  uint32_t expected[GPUCHECK_MEMTEST_RECORDED];
  uint32_t observed[GPUCHECK_MEMTEST_RECORDED];
};
