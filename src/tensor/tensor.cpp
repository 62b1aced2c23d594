// Tensor basics: element counts, contiguity, element access, contiguous copies and construction
// from doubles, plus the shape helpers every module prints and iterates with.
#include "tensor/tensor.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "tensor/element.hpp"

namespace gpuemu::tensor {

// Saturates instead of overflowing: shapes arrive from peers before validate_view has judged them,
// and a saturated size then fails validation with a message instead of wrapping around.
std::int64_t shape_numel(const Shape& shape) {
  constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();
  std::int64_t n = 1;
  bool saturated = false;
  for (auto d : shape) {
    if (d == 0) return 0;
    saturated = saturated || __builtin_mul_overflow(n, d, &n);
  }
  return saturated ? kSaturated : n;
}

std::vector<std::int64_t> contiguous_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  std::int64_t step = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    strides[k] = step;
    if (__builtin_mul_overflow(step, shape[k] > 0 ? shape[k] : 1, &step)) {
      step = std::numeric_limits<std::int64_t>::max();  // saturate; see shape_numel
    }
  }
  return strides;
}

std::string shape_to_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (k > 0) {
      out += ", ";
    }
    out += std::to_string(shape[k]);
  }
  return out + "]";
}

std::vector<std::int64_t> unravel_index(const Shape& shape, std::int64_t linear) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] > 0) {
      index[k] = linear % shape[k];
      linear /= shape[k];
    }
  }
  return index;
}

std::int64_t Tensor::numel() const {
  return shape_numel(shape);
}

bool Tensor::is_contiguous() const {
  const std::int64_t n = numel();
  if (strides.size() != shape.size() || data.size() != static_cast<std::size_t>(n) * dtype_size(dtype)) {
    return false;
  }
  // As in numpy, the stride of a dimension of size 1 (or of an empty tensor) is never used.
  std::int64_t step = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && n != 0 && strides[k] != step) {
      return false;
    }
    step *= shape[k];
  }
  return true;
}

double Tensor::get(std::int64_t logical_index) const {
  double value = 0;
  decode_range(logical_index, std::span<double>(&value, 1));
  return value;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out(static_cast<std::size_t>(numel()));
  decode_range(0, out);
  return out;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) {
    Tensor copy = *this;
    copy.strides = contiguous_strides(shape);  // normalise unused strides of size-1 dims
    return copy;
  }
  // Copy bytes, not decoded doubles, so every bit pattern (NaN payloads included) survives.
  const std::size_t item = dtype_size(dtype);
  const std::int64_t n = numel();
  Tensor out{dtype, shape, contiguous_strides(shape),
             std::vector<std::byte>(static_cast<std::size_t>(n) * item)};
  std::vector<std::int64_t> index(shape.size(), 0);
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t at = static_cast<std::size_t>(offset) * item;
    if (at + item > data.size()) {
      throw std::out_of_range("Tensor::contiguous: view reaches past its data; call validate_view first");
    }
    std::memcpy(out.data.data() + static_cast<std::size_t>(i) * item, data.data() + at, item);
    for (std::size_t k = shape.size(); k-- > 0;) {  // odometer step over the logical index
      offset += strides[k];
      if (++index[k] < shape[k]) {
        break;
      }
      offset -= strides[k] * shape[k];
      index[k] = 0;
    }
  }
  return out;
}

Tensor Tensor::from_doubles(DType dtype, Shape shape, std::span<const double> values) {
  const std::int64_t n = shape_numel(shape);
  if (n < 0 || static_cast<std::size_t>(n) != values.size()) {
    throw std::invalid_argument("Tensor::from_doubles: " + std::to_string(values.size()) +
                                " values for shape " + shape_to_string(shape));
  }
  const std::size_t item = dtype_size(dtype);
  Tensor out{dtype, shape, contiguous_strides(shape), std::vector<std::byte>(values.size() * item)};
  std::byte* p = out.data.data();
  for (double v : values) {
    store_element(dtype, v, p);
    p += item;
  }
  return out;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  const std::int64_t n = shape_numel(shape);
  if (n < 0) {
    throw std::invalid_argument("Tensor::zeros: negative dimension in shape " + shape_to_string(shape));
  }
  // All-zero bytes are zero in every supported dtype.
  return Tensor{dtype, shape, contiguous_strides(shape),
                std::vector<std::byte>(static_cast<std::size_t>(n) * dtype_size(dtype))};
}

}  // namespace gpuemu::tensor
