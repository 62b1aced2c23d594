// Loading and storing one element of any dtype from little-endian bytes, exactly. The one place
// that maps a DType to its C++ representation; bulk paths in decode.cpp specialise on it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tensor/dtype.hpp"
#include "tensor/half.hpp"

namespace gpuemu::tensor {

template <class T>
inline T load_raw(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));  // x86-64 and aarch64 are little-endian, like the wire format
  return value;
}

template <class T>
inline void store_raw(std::byte* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

// Clamp to the integer type's range, then truncate toward zero; NaN becomes 0.
template <class I>
inline I saturate_to(double value) {
  if (std::isnan(value)) {
    return 0;
  }
  // The bounds are exact in double for every type up to 32 bits; for int64 the upper bound
  // 2^63 is exact and anything at or above it saturates.
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi_excl = static_cast<double>(std::numeric_limits<I>::max()) + 1.0;
  if (value <= lo) {
    return std::numeric_limits<I>::min();
  }
  if (value >= hi_excl) {
    return std::numeric_limits<I>::max();
  }
  return static_cast<I>(value);
}

inline double load_element(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::float16:
      return f16_to_double(load_raw<std::uint16_t>(p));
    case DType::bfloat16:
      return bf16_to_double(load_raw<std::uint16_t>(p));
    case DType::float32:
      return load_raw<float>(p);
    case DType::float64:
      return load_raw<double>(p);
    case DType::int8:
      return load_raw<std::int8_t>(p);
    case DType::int16:
      return load_raw<std::int16_t>(p);
    case DType::int32:
      return load_raw<std::int32_t>(p);
    case DType::int64:
      return static_cast<double>(load_raw<std::int64_t>(p));
    case DType::uint8:
      return load_raw<std::uint8_t>(p);
    case DType::bool_:
      return load_raw<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  return NAN;
}

inline void store_element(DType dtype, double value, std::byte* p) {
  switch (dtype) {
    case DType::float16:
      return store_raw(p, double_to_f16(value));
    case DType::bfloat16:
      return store_raw(p, double_to_bf16(value));
    case DType::float32:
      return store_raw(p, double_to_f32(value));
    case DType::float64:
      return store_raw(p, value);
    case DType::int8:
      return store_raw(p, saturate_to<std::int8_t>(value));
    case DType::int16:
      return store_raw(p, saturate_to<std::int16_t>(value));
    case DType::int32:
      return store_raw(p, saturate_to<std::int32_t>(value));
    case DType::int64:
      return store_raw(p, saturate_to<std::int64_t>(value));
    case DType::uint8:
      return store_raw(p, saturate_to<std::uint8_t>(value));
    case DType::bool_:
      return store_raw(p, static_cast<std::uint8_t>(value != 0 ? 1 : 0));
  }
}

}  // namespace gpuemu::tensor
