// Limits on the size of one case ([validation] max_case_elements / max_case_bytes, docs/configuration.md):
// judged from shapes alone (a zero stride counts as the full view) before anything is allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::config {

struct CaseLimits {
  std::int64_t max_elements = 0;
  std::int64_t max_bytes = 0;
  static CaseLimits of(const ValidationConfig& v) { return {v.max_case_elements, v.max_case_bytes}; }
};

// Elements and bytes of a case's tensors as their full logical views; both saturate at INT64_MAX.
struct CaseSize {
  std::int64_t elements = 0;
  std::int64_t bytes = 0;
  void add(const tensor::Shape& shape, std::size_t item_bytes);
};

// The largest case an op can generate: every schema dim at its largest, the widest dtype the op
// runs at (or an input's fixed dtype), its inputs and its declared output.
CaseSize largest_case(const OpConfig& op);

// Nothing when `size` is within `limits`; else a message "<what> has N elements, over the limit of
// M ([validation] max_case_elements)" (or bytes) that names the limit and how to raise it.
std::optional<std::string> over_limits(const CaseSize& size, const CaseLimits& limits, std::string_view what);

}  // namespace gpuemu::config
