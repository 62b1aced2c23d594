// Text forms of result.json values shared by every writer, so a number, a shape or a location
// reads the same in JUnit, SARIF, Markdown and GitHub annotations.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "report/result_document.hpp"

namespace gpuemu::report {

// Six significant digits; non-finite values as result.json spells them ("NaN", "Infinity").
std::string format_number(double value);
// {"x": [4, 65], "y": [65]} -> "x=[4, 65] y=[65]"; {"N": 65} -> "N=65".
std::string format_shapes(const std::map<std::string, std::vector<std::int64_t>>& shapes);
std::string format_dims(const std::map<std::string, std::int64_t>& dims);
// [3, 64] -> "[3, 64]".
std::string format_index(const std::vector<std::int64_t>& index);
// "path:line", "path", or "" when unknown.
std::string format_location(const SourceLocation& location);
// "softmax[float16]": how every report names one (op, dtype).
std::string case_label(std::string_view op, std::string_view dtype);
// The first line of `text`, for places that take one line (titles, JUnit message attributes).
std::string first_line(std::string_view text);

}  // namespace gpuemu::report
