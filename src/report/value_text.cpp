// Text forms of result.json values (see value_text.hpp); deliberately locale-independent so reports
// are byte-identical on every machine.
#include "report/value_text.hpp"

#include <cmath>
#include <cstdio>

namespace gpuemu::report {

std::string format_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string format_index(const std::vector<std::int64_t>& index) {
  std::string text = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(index[i]);
  }
  return text + "]";
}

std::string format_shapes(const std::map<std::string, std::vector<std::int64_t>>& shapes) {
  std::string text;
  for (const auto& [name, shape] : shapes) {
    if (!text.empty()) text += ' ';
    text += name + "=" + format_index(shape);
  }
  return text;
}

std::string format_dims(const std::map<std::string, std::int64_t>& dims) {
  std::string text;
  for (const auto& [name, size] : dims) {
    if (!text.empty()) text += ' ';
    text += name + "=" + std::to_string(size);
  }
  return text;
}

std::string format_location(const SourceLocation& location) {
  if (!location.known()) return "";
  return location.line > 0 ? location.path + ":" + std::to_string(location.line) : location.path;
}

std::string case_label(std::string_view op, std::string_view dtype) {
  if (dtype.empty()) return std::string(op);  // a finding about the whole op (not run)
  return std::string(op) + "[" + std::string(dtype) + "]";
}

std::string first_line(std::string_view text) {
  auto end = text.find_first_of("\r\n");
  return std::string(text.substr(0, end));
}

}  // namespace gpuemu::report
