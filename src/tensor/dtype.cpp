// DType names, aliases and sizes (see dtype.hpp). The canonical names are numpy's, because
// scripts exchange dtypes as numpy strings; aliases are what people type in gpuemu.toml.
#include "tensor/dtype.hpp"

#include <array>
#include <utility>

namespace gpuemu::tensor {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
  bool floating;
};

constexpr std::array<DTypeInfo, 10> kDTypes{{
    {DType::float16, "float16", 2, true},
    {DType::bfloat16, "bfloat16", 2, true},
    {DType::float32, "float32", 4, true},
    {DType::float64, "float64", 8, true},
    {DType::int8, "int8", 1, false},
    {DType::int16, "int16", 2, false},
    {DType::int32, "int32", 4, false},
    {DType::int64, "int64", 8, false},
    {DType::uint8, "uint8", 1, false},
    {DType::bool_, "bool", 1, false},
}};

constexpr std::array<std::pair<std::string_view, DType>, 22> kAliases{{
    {"f16", DType::float16}, {"fp16", DType::float16}, {"half", DType::float16},   {"bf16", DType::bfloat16},
    {"f32", DType::float32}, {"fp32", DType::float32}, {"float", DType::float32},  {"single", DType::float32},
    {"f64", DType::float64}, {"fp64", DType::float64}, {"double", DType::float64}, {"i8", DType::int8},
    {"i16", DType::int16},   {"short", DType::int16},  {"i32", DType::int32},      {"int", DType::int32},
    {"i64", DType::int64},   {"long", DType::int64},   {"u8", DType::uint8},       {"byte", DType::uint8},
    {"bool_", DType::bool_}, {"b8", DType::bool_},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes) {
    if (entry.dtype == dtype) {
      return entry;
    }
  }
  // An out-of-range enum value can only come from a cast of corrupt data; float32 keeps the
  // caller memory-safe and validate_view reports the mismatch in sizes.
  return kDTypes[2];
}

}  // namespace

std::string_view dtype_name(DType dtype) {
  return info(dtype).name;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& entry : kDTypes) {
    if (entry.name == name) {
      return entry.dtype;
    }
  }
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == name) {
      return dtype;
    }
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) {
  return info(dtype).size;
}

bool is_floating(DType dtype) {
  return info(dtype).floating;
}

const std::vector<std::string_view>& all_dtype_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& entry : kDTypes) {
      out.push_back(entry.name);
    }
    return out;
  }();
  return names;
}

}  // namespace gpuemu::tensor
