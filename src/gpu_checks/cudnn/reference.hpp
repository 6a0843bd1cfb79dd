#pragma once
/// The cuDNN check's host side, without cuDNN: the precisions and their 16-bit encodings, the
/// hashed input values both the GPU's fill kernel and the CPU compute, and the CPU reference of a
/// convolution in double. Tested on the host (src/gpu_checks/cudnn/reference_test.cpp).

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/gpucheck_values.h"

namespace gpucheck::gpu_checks::cudnn {

enum class Precision { fp32, tf32, fp16, bf16 };

const char* precision_name(Precision p);

/// Bytes per element on the GPU: 2 for fp16 and bf16, else 4.
inline size_t element_bytes(Precision p) {
  return p == Precision::fp16 || p == Precision::bf16 ? 2 : 4;
}

/// |error| allowed per output, as a fraction of sum(|x*w|) over its terms.
double tolerance(Precision p);

// Inline, as the rest of this block: the reference calls them once per term.
inline uint16_t float_to_half(float value) {
  return gpucheck_float_to_half(value);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000U) << 16;
  const int exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FFU;
  if (exponent == 0) {
    const float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -value : value;
  }
  if (exponent == 31) {
    return std::bit_cast<float>(sign | 0x7F800000U | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(exponent - 15 + 127) << 23) |
                              (mantissa << 13));
}

inline uint16_t float_to_bf16(float value) {
  return gpucheck_float_to_bf16(value);
}

inline float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// The input value at physical offset `o` (a hash, so inputs are fresh and need no storage),
/// already rounded to the precision the GPU sees.
inline float input_value(uint64_t o, uint32_t seed, Precision p, float scale = 1.0F) {
  const float v = gpucheck_input_value(o, seed, scale); // [-1, 1) x scale
  switch (p) {
  case Precision::fp16:
    return half_to_float(float_to_half(v));
  case Precision::bf16:
    return bf16_to_float(float_to_bf16(v));
  default:
    return v;
  }
}

/// One element in the GPU's encoding of `p`, and back.
inline void store(unsigned char* dst, float value, Precision p) {
  if (element_bytes(p) == 2) {
    const uint16_t bits = p == Precision::fp16 ? float_to_half(value) : float_to_bf16(value);
    std::memcpy(dst, &bits, 2);
  } else {
    std::memcpy(dst, &value, 4);
  }
}

inline float load(const unsigned char* src, Precision p) {
  if (element_bytes(p) == 2) {
    uint16_t bits = 0;
    std::memcpy(&bits, src, 2);
    return p == Precision::fp16 ? half_to_float(bits) : bf16_to_float(bits);
  }
  float value = 0.0F;
  std::memcpy(&value, src, 4);
  return value;
}

/// A convolution's shape: input n x c x h x w, k filters of c x r x s, the padding and stride,
/// and the output's height and width (cuDNN's, n x k x oh x ow); NHWC or NCHW for every tensor.
struct ConvGeometry {
  int n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1, pad = 0, stride = 1;
  int oh = 1, ow = 1;
  bool nhwc = false;
};

/// The CPU reference of a convolution whose input and filter are input_value() at their
/// physical offsets under two seeds.
class ConvReference {
public:
  ConvReference(const ConvGeometry& geometry, Precision precision, uint32_t x_seed,
                uint32_t w_seed);

  [[nodiscard]] const ConvGeometry& geometry() const { return m_g; }

  /// Physical offsets in the input, the filter and the output.
  [[nodiscard]] uint64_t x_at(int ni, int ci, int hi, int wi) const;
  [[nodiscard]] uint64_t w_at(int ki, int ci, int ri, int si) const;
  [[nodiscard]] uint64_t y_at(int ni, int ki, int pi, int qi) const;

  /// Output (ni, ki, pi, qi) in double; `sum_abs` gets the sum of |terms|, which scales its
  /// tolerance.
  double output(int ni, int ki, int pi, int qi, double& sum_abs) const;

private:
  ConvGeometry m_g;
  Precision m_precision;
  uint32_t m_x_seed;
  uint32_t m_w_seed;
};

} // namespace gpucheck::gpu_checks::cudnn
