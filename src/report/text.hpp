// Plain-text rendering of a result document (docs/result-json.md) for terminals and logs:
// a line per op and dtype, then each failure with its message and one-line replay command.
#pragma once

#include <string>

#include "result/document.hpp"

namespace gpuemu::report {

struct TextOptions {
  int max_failures_per_op = 5;  // the rest are counted, not listed
};

std::string render_text(const result::ResultDocument& result, const TextOptions& options = {});

}  // namespace gpuemu::report
