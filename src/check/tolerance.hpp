// Tolerances: an absolute and a relative bound per dtype, with the defaults of the FAQ
// (f32 1e-5/1e-5, f16 and bf16 1e-2/1e-2, f64 1e-10/1e-10; integers and bool exact).
#pragma once

#include "tensor/dtype.hpp"

namespace gpuemu::check {

struct ToleranceSpec {
  double atol = 1e-5;
  double rtol = 1e-5;
  bool operator==(const ToleranceSpec&) const = default;
};

ToleranceSpec default_tolerance(tensor::DType dtype);

}  // namespace gpuemu::check
