// Text forms of values and positions for verdict messages (see verdict_text.hpp).
// fmt stands in for <format>, which GCC 12's library lacks.
#include "check/verdict_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpuemu::check {

std::string format_value(double value, tensor::DType dtype) {
  using tensor::DType;
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  switch (dtype) {
    case DType::float32:
      return fmt::format("{}", static_cast<float>(value));
    case DType::float16:
      return fmt::format("{:.5g}", value);
    case DType::bfloat16:
      return fmt::format("{:.4g}", value);
    default:
      return fmt::format("{}", value);
  }
}

std::string format_element(const std::string& output, const std::vector<std::int64_t>& index) {
  if (index.empty()) {
    return output;
  }
  return fmt::format("{}[{}]", output, fmt::join(index, ", "));
}

std::string format_short(double value) {
  return fmt::format("{:.3g}", value);
}

std::string format_percent(double fraction) {
  const double pct = fraction * 100;
  if (pct >= 10) {
    return fmt::format("{:.3g}", pct);
  }
  return fmt::format("{:.2g}", pct);
}

}  // namespace gpuemu::check
