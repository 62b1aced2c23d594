// Element types gpuemu understands, their names on the wire and in gpuemu.toml, and sizes.
// DType numbers are persisted in the store (the dtype columns, input snapshots): never renumber.
// Frames, the IPC and result.json carry the names (dtype_name), not the numbers.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace gpuemu::tensor {

enum class DType : int {
  float16 = 0,
  bfloat16 = 1,
  float32 = 2,
  float64 = 3,
  int8 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  uint8 = 8,
  bool_ = 9,
};

// Canonical name as numpy spells it ("float16", "bfloat16", "bool", ...).
std::string_view dtype_name(DType dtype);
// Accepts canonical names and common aliases (f16, fp16, half, bf16, f32, float, f64, double, ...).
std::optional<DType> parse_dtype(std::string_view name);
std::size_t dtype_size(DType dtype);
bool is_floating(DType dtype);
// Every canonical name, for "did you mean" suggestions and docs.
const std::vector<std::string_view>& all_dtype_names();

}  // namespace gpuemu::tensor
