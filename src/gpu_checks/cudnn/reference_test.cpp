// The cuDNN check's host side: the 16-bit encodings, the hashed inputs and the CPU reference of a
// convolution, which every cuDNN output is judged against.
#include "gpu_checks/cudnn/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpucheck::gpu_checks::cudnn {
namespace {

TEST(CudnnReference, HalfAndBf16EncodeAndDecode) {
  EXPECT_EQ(float_to_half(1.0F), 0x3C00U);
  EXPECT_EQ(float_to_half(-2.0F), 0xC000U);
  EXPECT_EQ(half_to_float(0x3C00U), 1.0F);
  EXPECT_EQ(half_to_float(0x0001U), std::ldexp(1.0F, -24)); // the smallest subnormal
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00U)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00U)));
  EXPECT_EQ(float_to_bf16(1.0F), 0x3F80U);
  EXPECT_EQ(bf16_to_float(0x3F80U), 1.0F);
  EXPECT_EQ(bf16_to_float(0xC000U), -2.0F);
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
    unsigned char bytes[4] = {};
    const float value = input_value(12345, 7, p);
    store(bytes, value, p);
    EXPECT_EQ(load(bytes, p), value) << precision_name(p); // inputs are already representable
    EXPECT_EQ(element_bytes(p), p == Precision::fp16 || p == Precision::bf16 ? 2U : 4U);
    EXPECT_GT(tolerance(p), 0.0);
  }
}

TEST(CudnnReference, InputsAreFreshPerSeedAndRoundedToThePrecision) {
  const float a = input_value(100, 1, Precision::fp32);
  EXPECT_GE(a, -1.0F);
  EXPECT_LT(a, 1.0F);
  EXPECT_NE(a, input_value(100, 2, Precision::fp32));
  EXPECT_NE(a, input_value(101, 1, Precision::fp32));
  EXPECT_EQ(input_value(100, 1, Precision::fp16),
            half_to_float(float_to_half(input_value(100, 1, Precision::fp32))));
  EXPECT_EQ(input_value(100, 1, Precision::fp32, 4.0F), 4.0F * a);
}

TEST(CudnnReference, LayoutsPlaceEachElement) {
  const ConvGeometry g{.n = 2, .c = 3, .h = 4, .w = 5, .k = 6, .r = 3, .s = 3, .oh = 4, .ow = 5};
  ConvGeometry nhwc = g;
  nhwc.nhwc = true;
  const ConvReference nchw_ref(g, Precision::fp32, 1, 2);
  const ConvReference nhwc_ref(nhwc, Precision::fp32, 1, 2);
  // The last element of x is 119 in both layouts; an inner one tells them apart.
  EXPECT_EQ(nchw_ref.x_at(1, 2, 3, 4), 119U);
  EXPECT_EQ(nhwc_ref.x_at(1, 2, 3, 4), 119U);
  EXPECT_EQ(nchw_ref.x_at(0, 1, 0, 0), 20U);
  EXPECT_EQ(nhwc_ref.x_at(0, 1, 0, 0), 1U);
  EXPECT_EQ(nchw_ref.w_at(1, 0, 0, 1), 28U);
  EXPECT_EQ(nhwc_ref.w_at(1, 0, 0, 1), 30U);
  EXPECT_EQ(nchw_ref.y_at(0, 1, 0, 0), 20U);
  EXPECT_EQ(nhwc_ref.y_at(0, 1, 0, 0), 1U);
}

TEST(CudnnReference, OneByOneFilterIsAProductAndPaddingDropsTerms) {
  // A 1x1 filter over one channel: each output is x * w.
  const ConvGeometry one{.n = 1, .c = 1, .h = 3, .w = 3, .k = 1, .r = 1, .s = 1, .oh = 3, .ow = 3};
  const ConvReference ref(one, Precision::fp32, 11, 12);
  double sum_abs = 0.0;
  const double got = ref.output(0, 0, 1, 2, sum_abs);
  const double want = double(input_value(ref.x_at(0, 0, 1, 2), 11, Precision::fp32)) *
                      double(input_value(ref.w_at(0, 0, 0, 0), 12, Precision::fp32));
  EXPECT_DOUBLE_EQ(got, want);
  EXPECT_DOUBLE_EQ(sum_abs, std::abs(want));
  // A 3x3 filter with padding 1 on a 3x3 input: the centre sees 9 terms, a corner 4.
  const ConvGeometry padded{
      .n = 1, .c = 1, .h = 3, .w = 3, .k = 1, .r = 3, .s = 3, .pad = 1, .oh = 3, .ow = 3};
  const ConvReference pad_ref(padded, Precision::fp32, 11, 12);
  double corner_abs = 0.0;
  double centre_abs = 0.0;
  const double corner = pad_ref.output(0, 0, 0, 0, corner_abs);
  (void)pad_ref.output(0, 0, 1, 1, centre_abs);
  double by_hand = 0.0;
  for (int ri = 1; ri < 3; ++ri) {
    for (int si = 1; si < 3; ++si) {
      by_hand += double(input_value(pad_ref.x_at(0, 0, ri - 1, si - 1), 11, Precision::fp32)) *
                 double(input_value(pad_ref.w_at(0, 0, ri, si), 12, Precision::fp32));
    }
  }
  EXPECT_DOUBLE_EQ(corner, by_hand);
  EXPECT_GT(centre_abs, corner_abs);
}

} // namespace
} // namespace gpucheck::gpu_checks::cudnn
