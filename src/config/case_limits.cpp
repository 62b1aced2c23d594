// Case size limits (case_limits.hpp): the arithmetic saturates, so shapes such as [2^40, 2^40]
// from a config or a peer are judged too large instead of wrapping around to small numbers.
#include "config/case_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <variant>

namespace gpuemu::config {
namespace {

constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? kSaturated : out;
}

std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kSaturated : out;
}

// A schema dim's largest value; literal sizes are themselves.
std::int64_t largest(const DimRef& ref, const OpSchema& schema) {
  if (const auto* size = std::get_if<std::int64_t>(&ref)) return *size;
  const auto& name = std::get<std::string>(ref);
  for (const auto& dim : schema.dims) {
    if (dim.name == name) return dim.candidates.empty() ? dim.max : *std::ranges::max_element(dim.candidates);
  }
  return 1;
}

}  // namespace

void CaseSize::add(const tensor::Shape& shape, std::size_t item_bytes) {
  const std::int64_t n = tensor::shape_numel(shape);
  elements = saturating_add(elements, n);
  bytes = saturating_add(bytes, saturating_mul(n, static_cast<std::int64_t>(item_bytes)));
}

CaseSize largest_case(const OpConfig& op) {
  std::size_t widest = 1;
  for (const auto dtype : op.dtypes) widest = std::max(widest, tensor::dtype_size(dtype));
  auto item_bytes = [&](const std::string& input) {
    const auto it = op.inputs.find(input);
    return it != op.inputs.end() && it->second.dtype ? tensor::dtype_size(*it->second.dtype) : widest;
  };
  CaseSize size;
  auto add = [&](const std::vector<DimRef>& refs, std::size_t item) {
    tensor::Shape shape;
    for (const auto& ref : refs) shape.push_back(op.schema ? largest(ref, *op.schema) : std::get<std::int64_t>(ref));
    size.add(shape, item);
  };
  if (op.schema) {
    for (const auto& [name, refs] : op.schema->inputs) add(refs, item_bytes(name));
    add(op.schema->output, widest);
  } else {
    for (const auto& [name, spec] : op.inputs) {
      tensor::Shape shape;
      for (const auto& ref : spec.shape) {
        if (const auto* n = std::get_if<std::int64_t>(&ref)) shape.push_back(*n);
      }
      size.add(shape, item_bytes(name));
    }
  }
  return size;
}

std::optional<std::string> over_limits(const CaseSize& size, const CaseLimits& limits, std::string_view what) {
  auto number = [](std::int64_t n) {
    return n == kSaturated ? std::string("more than 9223372036854775807") : fmt::format("{}", n);
  };
  if (size.elements > limits.max_elements) {
    return fmt::format("{} has {} elements, over the limit of {} per case ([validation] max_case_elements; "
                       "a zero stride counts as the full view)",
                       what, number(size.elements), limits.max_elements);
  }
  if (size.bytes > limits.max_bytes) {
    return fmt::format("{} has {} bytes, over the limit of {} per case ([validation] max_case_bytes)", what,
                       number(size.bytes), limits.max_bytes);
  }
  return std::nullopt;
}

}  // namespace gpuemu::config
