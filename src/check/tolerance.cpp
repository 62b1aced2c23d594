// Default tolerances per dtype, from the FAQ: loose enough for correct kernels in that precision,
// tight enough that a real bug (a dropped term, a wrong scale) is far outside them.
#include "check/tolerance.hpp"

namespace gpuemu::check {

ToleranceSpec default_tolerance(tensor::DType dtype) {
  using tensor::DType;
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16:
      return {1e-2, 1e-2};
    case DType::float32:
      return {1e-5, 1e-5};
    case DType::float64:
      return {1e-10, 1e-10};
    default:
      return {0, 0};  // integers and bool compare exactly
  }
}

}  // namespace gpuemu::check
