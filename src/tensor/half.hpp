// Exact IEEE binary16 and bfloat16 conversions: every bit pattern decodes exactly (subnormals,
// signed zero, Inf, NaN), and encoding rounds to nearest-even directly from double (no double rounding).
#pragma once

#include <cstdint>

namespace gpuemu::tensor {

double f16_to_double(std::uint16_t bits);
std::uint16_t double_to_f16(double value);  // round to nearest even; overflow gives +-Inf; NaN stays NaN
double bf16_to_double(std::uint16_t bits);
std::uint16_t double_to_bf16(double value);  // round to nearest even; overflow gives +-Inf; NaN stays NaN
float double_to_f32(double value);           // the C++ cast, named for symmetry

// Distance in units in the last place between two finite values as represented in the dtype
// (counts representable values between them; used for max_ulp statistics).
double ulp_distance_f16(double a, double b);
double ulp_distance_bf16(double a, double b);
double ulp_distance_f32(double a, double b);
double ulp_distance_f64(double a, double b);

}  // namespace gpuemu::tensor
