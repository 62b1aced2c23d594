// Text forms of result.json values shared by every writer, so a number, a shape or a location
// reads the same in JUnit, SARIF, Markdown and GitHub annotations.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "report/result_document.hpp"

namespace gpuemu::report {

// Six significant digits; non-finite values as result.json spells them ("NaN", "Infinity").
std::string format_number(double value);
// A result.json number (possibly a non-finite string); "-" when absent.
std::string format_field(const nlohmann::json& object, std::string_view key);
// {"x": [4, 65], "y": [65]} -> "x=[4, 65] y=[65]"; {"N": 65} -> "N=65".
std::string format_shapes(const nlohmann::json& shapes);
std::string format_dims(const nlohmann::json& dims);
// [3, 64] -> "[3, 64]".
std::string format_index(const nlohmann::json& index);
// "path:line", "path", or "" when unknown.
std::string format_location(const SourceLocation& location);
// "softmax[float16]": how every report names one (op, dtype).
std::string case_label(std::string_view op, std::string_view dtype);
// The first line of `text`, for places that take one line (titles, JUnit message attributes).
std::string first_line(std::string_view text);

}  // namespace gpuemu::report
