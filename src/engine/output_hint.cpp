// declare_output_hint (output_hint.hpp). Dims are listed in the order the inputs use them, so a size
// two dims share is written as the first input's (M before N for x[M, N]).
#include "engine/output_hint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace gpuemu::engine {
namespace {

using NamedSizes = std::vector<std::pair<std::string, std::int64_t>>;

void note_dim(NamedSizes& dims, const std::string& name, std::int64_t size) {
  const bool known = std::ranges::any_of(dims, [&](const auto& d) { return d.first == name; });
  if (!known) dims.emplace_back(name, size);
}

// The case's dims in input order: the schema's, sized by the case (or, a client's case, its inputs).
NamedSizes schema_dims(const config::OpSchema& schema, const fuzz::Case& c) {
  NamedSizes dims;
  for (const auto& [input, refs] : schema.inputs) {
    const auto it = c.inputs.find(input);
    for (std::size_t k = 0; k < refs.size(); ++k) {
      const auto* name = std::get_if<std::string>(&refs[k]);
      if (name == nullptr) continue;
      if (const auto d = c.dims.find(*name); d != c.dims.end()) {
        note_dim(dims, *name, d->second);
      } else if (it != c.inputs.end() && k < it->second.shape.size()) {
        note_dim(dims, *name, it->second.shape[k]);
      }
    }
  }
  return dims;
}

// `seen` written with the dims' names: ["M"] for [4] when M is 4; a size no dim has stays a number.
std::string output_line(const NamedSizes& dims, const tensor::Shape& seen) {
  std::vector<std::string> items;
  for (const std::int64_t size : seen) {
    const auto it = std::ranges::find_if(dims, [&](const auto& d) { return d.second == size; });
    items.push_back(it != dims.end() ? fmt::format("\"{}\"", it->first) : std::to_string(size));
  }
  return fmt::format("output = [{}]", fmt::join(items, ", "));
}

}  // namespace

std::string declare_output_hint(const config::OpConfig& op, const fuzz::Case& c, const tensor::Shape& seen) {
  const std::string shape = tensor::shape_to_string(seen);
  if (op.schema) {
    return fmt::format(
        "if {} is the right shape (op '{}' reduces or reshapes), declare it: add {} under the "
        "op's [ops.schema] in gpuemu.toml",
        shape, op.name, output_line(schema_dims(*op.schema, c), seen));
  }
  // No schema: one dim per distinct size of the inputs' present shapes, each pinned to that size.
  NamedSizes dims;
  std::vector<std::string> inputs;
  for (const auto& input : c.input_order) {
    const auto it = c.inputs.find(input);
    if (it == c.inputs.end()) continue;
    std::vector<std::string> refs;
    for (const std::int64_t size : it->second.shape) {
      auto d = std::ranges::find_if(dims, [&](const auto& named) { return named.second == size; });
      if (d == dims.end()) {
        dims.emplace_back(fmt::format("D{}", dims.size()), size);
        d = std::prev(dims.end());
      }
      refs.push_back(fmt::format("\"{}\"", d->first));
    }
    inputs.push_back(fmt::format("{} = [{}]", input, fmt::join(refs, ", ")));
  }
  std::vector<std::string> dim_items;
  for (const auto& [name, size] : dims)
    dim_items.push_back(fmt::format("{} = {{ candidates = [{}] }}", name, size));
  return fmt::format(
      "if {} is the right shape (op '{}' reduces or reshapes), declare it in gpuemu.toml after the op's "
      "[[ops]] lines:\n[ops.schema]\ndims = {{ {} }}\ninputs = {{ {} }}\n{}",
      shape, op.name, fmt::join(dim_items, ", "), fmt::join(inputs, ", "), output_line(dims, seen));
}

}  // namespace gpuemu::engine
