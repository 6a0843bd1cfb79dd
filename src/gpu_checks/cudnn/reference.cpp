#include "gpu_checks/cudnn/reference.hpp"

#include <cmath>

namespace gpucheck::gpu_checks::cudnn {

const char* precision_name(Precision p) {
  switch (p) {
  case Precision::fp32:
    return "fp32";
  case Precision::tf32:
    return "tf32";
  case Precision::fp16:
    return "fp16";
  case Precision::bf16:
    return "bf16";
  }
  return "?";
}

double tolerance(Precision p) {
  switch (p) {
  case Precision::fp32:
    return 1e-4;
  case Precision::tf32:
    return 4e-3;
  case Precision::fp16:
    return 3e-3;
  case Precision::bf16:
    return 1.5e-2;
  }
  return 1e-2;
}

ConvReference::ConvReference(const ConvGeometry& geometry, Precision precision, uint32_t x_seed,
                             uint32_t w_seed)
    : m_g(geometry), m_precision(precision), m_x_seed(x_seed), m_w_seed(w_seed) {}

uint64_t ConvReference::x_at(int ni, int ci, int hi, int wi) const {
  return m_g.nhwc ? ((uint64_t(ni) * m_g.h + hi) * m_g.w + wi) * m_g.c + ci
                  : ((uint64_t(ni) * m_g.c + ci) * m_g.h + hi) * m_g.w + wi;
}

uint64_t ConvReference::w_at(int ki, int ci, int ri, int si) const {
  return m_g.nhwc ? ((uint64_t(ki) * m_g.r + ri) * m_g.s + si) * m_g.c + ci
                  : ((uint64_t(ki) * m_g.c + ci) * m_g.r + ri) * m_g.s + si;
}

uint64_t ConvReference::y_at(int ni, int ki, int pi, int qi) const {
  return m_g.nhwc ? ((uint64_t(ni) * m_g.oh + pi) * m_g.ow + qi) * m_g.k + ki
                  : ((uint64_t(ni) * m_g.k + ki) * m_g.oh + pi) * m_g.ow + qi;
}

double ConvReference::output(int ni, int ki, int pi, int qi, double& sum_abs) const {
  double sum = 0.0;
  sum_abs = 0.0;
  for (int ci = 0; ci < m_g.c; ++ci) {
    for (int ri = 0; ri < m_g.r; ++ri) {
      const int hi = pi * m_g.stride - m_g.pad + ri;
      if (hi < 0 || hi >= m_g.h) {
        continue;
      }
      for (int si = 0; si < m_g.s; ++si) {
        const int wi = qi * m_g.stride - m_g.pad + si;
        if (wi < 0 || wi >= m_g.w) {
          continue;
        }
        const double term = double(input_value(x_at(ni, ci, hi, wi), m_x_seed, m_precision)) *
                            double(input_value(w_at(ki, ci, ri, si), m_w_seed, m_precision));
        sum += term;
        sum_abs += std::abs(term);
      }
    }
  }
  return sum;
}

} // namespace gpucheck::gpu_checks::cudnn
