// Names of the framework an op's callable receives, of the interpreter modes for its Triton and
// Pallas kernels and of the numpy bfloat16 forms, as gpuemu.toml, result.json and the workers spell them.
#include <array>

#include "config/config.hpp"

namespace gpuemu::config {

namespace {
constexpr std::array kFrameworks{Framework::numpy, Framework::pytorch, Framework::jax, Framework::tensorflow};
}  // namespace

std::span<const Framework> frameworks() {
  return kFrameworks;
}

std::string_view framework_name(Framework framework) {
  switch (framework) {
    case Framework::numpy:
      return "numpy";
    case Framework::pytorch:
      return "pytorch";
    case Framework::jax:
      return "jax";
    case Framework::tensorflow:
      return "tensorflow";
  }
  return "numpy";
}

std::optional<Framework> parse_framework(std::string_view name) {
  for (auto f : kFrameworks) {
    if (framework_name(f) == name) return f;
  }
  return std::nullopt;
}

std::string_view interpret_mode_name(InterpretMode mode) {
  switch (mode) {
    case InterpretMode::automatic:
      return "auto";
    case InterpretMode::always:
      return "always";
    case InterpretMode::never:
      return "never";
  }
  return "auto";
}

std::optional<InterpretMode> parse_interpret_mode(std::string_view name) {
  for (auto m : {InterpretMode::automatic, InterpretMode::always, InterpretMode::never}) {
    if (interpret_mode_name(m) == name) return m;
  }
  return std::nullopt;
}

std::string_view numpy_bfloat16_name(NumpyBfloat16 form) {
  return form == NumpyBfloat16::float32 ? "float32" : "ml_dtypes";
}

std::optional<NumpyBfloat16> parse_numpy_bfloat16(std::string_view name) {
  for (auto f : {NumpyBfloat16::ml_dtypes, NumpyBfloat16::float32}) {
    if (numpy_bfloat16_name(f) == name) return f;
  }
  return std::nullopt;
}

}  // namespace gpuemu::config
