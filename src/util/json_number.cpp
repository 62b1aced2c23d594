// The one spelling of non-finite numbers in JSON (see json_number.hpp): written by every writer of
// gpuemu's documents and read back by every reader, so "Infinity" means the same everywhere.
#include "util/json_number.hpp"

#include <cmath>
#include <limits>

namespace gpuemu::util {

nlohmann::json json_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

std::optional<double> read_json_number(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (!value.is_string()) return std::nullopt;
  const auto& text = value.get_ref<const std::string&>();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

}  // namespace gpuemu::util
