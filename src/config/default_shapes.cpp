// undeclared_input_shapes (default_shapes.hpp): the check, and the [ops.schema] it suggests: a chain
// of dims through the inputs (matmul's a[M, K], b[K, N] for two), since which dims agree is the
// user's to say.
#include "config/default_shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace gpuemu::config {
namespace {

// The dim names of the suggested chain: M, K, N for two inputs, D0 ... Dn for more.
std::vector<std::string> chain_dims(std::size_t inputs) {
  if (inputs == 2) return {"M", "K", "N"};
  std::vector<std::string> names;
  for (std::size_t k = 0; k <= inputs; ++k) names.push_back(fmt::format("D{}", k));
  return names;
}

std::string suggested_schema(const OpConfig& op) {
  const auto dims = chain_dims(op.input_names.size());
  const std::int64_t largest = kDefaultInputShape.back();
  std::vector<std::string> dim_items;
  for (const auto& d : dims) dim_items.push_back(fmt::format("{} = [1, {}]", d, largest));
  std::vector<std::string> input_items;
  for (std::size_t k = 0; k < op.input_names.size(); ++k)
    input_items.push_back(fmt::format("{} = [\"{}\", \"{}\"]", op.input_names[k], dims[k], dims[k + 1]));
  return fmt::format("[ops.schema]\ndims = {{ {} }}\ninputs = {{ {} }}\noutput = [\"{}\", \"{}\"]",
                     fmt::join(dim_items, ", "), fmt::join(input_items, ", "), dims.front(), dims.back());
}

}  // namespace

std::optional<std::string> undeclared_input_shapes(const OpConfig& op) {
  if (op.schema || op.input_names.size() < 2) return std::nullopt;
  for (const auto& name : op.input_names) {
    const auto it = op.inputs.find(name);
    if (it == op.inputs.end() || !it->second.shape_defaulted) return std::nullopt;
  }
  const std::string shape = fmt::format("[{}]", fmt::join(kDefaultInputShape, ", "));
  const std::string first = op.input_names.front();
  return diagnostic_at(
      op.location,
      fmt::format("op '{}' has no [ops.schema], so each of its inputs ({}) takes the default shape {}; "
                  "inputs whose shapes must agree, such as a matmul's, cannot run on them",
                  op.name, fmt::join(op.input_names, ", "), shape),
      fmt::format("declare the shapes in gpuemu.toml after the op's [[ops]] lines; for a matmul:\n{}\n"
                  "(a dim named in two inputs has one size in both). If the inputs do share one shape, "
                  "declare it for each instead ([ops.inputs.{}] shape = {}); a client may also send its "
                  "own op_schema. See docs/configuration.md, \"Default input shape\".",
                  suggested_schema(op), first, shape));
}

}  // namespace gpuemu::config
