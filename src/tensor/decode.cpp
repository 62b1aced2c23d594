// Bulk decoding of tensor elements to double (Tensor::decode_range). The contiguous case is a
// tight per-dtype loop the compiler vectorises; strided views walk the index like an odometer.
#include <stdexcept>
#include <string>

#include "tensor/element.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::tensor {
namespace {

// Decode `n` consecutive elements starting at `src`, for one dtype chosen once per call.
template <DType D>
void decode_run(const std::byte* src, std::size_t n, double* out) {
  if constexpr (D == DType::float32) {
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = load_raw<float>(src + 4 * i);
    }
  } else if constexpr (D == DType::float64) {
    std::memcpy(out, src, n * sizeof(double));
  } else {
    const std::size_t item = dtype_size(D);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = load_element(D, src + item * i);
    }
  }
}

void decode_contiguous(DType dtype, const std::byte* src, std::size_t n, double* out) {
  switch (dtype) {
    case DType::float16:
      return decode_run<DType::float16>(src, n, out);
    case DType::bfloat16:
      return decode_run<DType::bfloat16>(src, n, out);
    case DType::float32:
      return decode_run<DType::float32>(src, n, out);
    case DType::float64:
      return decode_run<DType::float64>(src, n, out);
    case DType::int8:
      return decode_run<DType::int8>(src, n, out);
    case DType::int16:
      return decode_run<DType::int16>(src, n, out);
    case DType::int32:
      return decode_run<DType::int32>(src, n, out);
    case DType::int64:
      return decode_run<DType::int64>(src, n, out);
    case DType::uint8:
      return decode_run<DType::uint8>(src, n, out);
    case DType::bool_:
      return decode_run<DType::bool_>(src, n, out);
  }
}

}  // namespace

void Tensor::decode_range(std::int64_t first, std::span<double> out) const {
  const std::int64_t n = numel();
  const auto count = static_cast<std::int64_t>(out.size());
  if (first < 0 || count > n || first > n - count) {
    throw std::out_of_range("Tensor::decode_range: elements [" + std::to_string(first) + ", " +
                            std::to_string(first + count) + ") of a tensor with " + std::to_string(n));
  }
  if (count == 0) {
    return;
  }
  const std::size_t item = dtype_size(dtype);
  if (is_contiguous()) {
    decode_contiguous(dtype, data.data() + static_cast<std::size_t>(first) * item, out.size(), out.data());
    return;
  }
  if (strides.size() != shape.size()) {
    throw std::out_of_range(
        "Tensor::decode_range: strides and shape differ in rank; call validate_view first");
  }
  // Walk the view. The innermost dimension is a run with a fixed stride, which keeps the
  // common strided/transposed cases to one multiply-add per element.
  std::vector<std::int64_t> index = unravel_index(shape, first);
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    offset += index[k] * strides[k];
  }
  const std::size_t elements = data.size() / item;
  for (std::int64_t i = 0; i < count; ++i) {
    if (offset < 0 || static_cast<std::size_t>(offset) >= elements) {
      throw std::out_of_range("Tensor::decode_range: view reaches past its data; call validate_view first");
    }
    out[static_cast<std::size_t>(i)] =
        load_element(dtype, data.data() + static_cast<std::size_t>(offset) * item);
    for (std::size_t k = shape.size(); k-- > 0;) {
      offset += strides[k];
      if (++index[k] < shape[k]) {
        break;
      }
      offset -= strides[k] * shape[k];
      index[k] = 0;
    }
  }
}

}  // namespace gpuemu::tensor
