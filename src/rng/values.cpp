// The public face of value generation: distribution names, domain checks, and generate_tensor,
// which plans a tensor once and hands the element loop to fill_float or fill_int.
#include "rng/values.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "rng/value_plan.hpp"

namespace gpuemu::rng {
namespace {

constexpr std::array<std::pair<std::string_view, ValueDistribution>, 4> kDistributions{{
    {"mixed", ValueDistribution::mixed},
    {"regular", ValueDistribution::regular},
    {"boundary", ValueDistribution::boundary},
    {"adversarial", ValueDistribution::adversarial},
}};

ResolvedDomain resolve_or_throw(tensor::DType dtype, const Domain& domain) {
  auto resolved = resolve_domain(dtype, domain);
  if (!resolved) {
    throw std::invalid_argument(resolved.error().message);
  }
  return *resolved;
}

}  // namespace

std::string_view distribution_name(ValueDistribution d) {
  for (const auto& [name, value] : kDistributions) {
    if (value == d) {
      return name;
    }
  }
  return "mixed";
}

std::optional<ValueDistribution> parse_distribution(std::string_view name) {
  for (const auto& [known, value] : kDistributions) {
    if (known == name) {
      return value;
    }
  }
  return std::nullopt;
}

Expected<void> check_domain(tensor::DType dtype, const Domain& domain) {
  TRY(resolve_domain(dtype, domain));
  return {};
}

tensor::Tensor generate_tensor(std::uint64_t seed, tensor::DType dtype, const tensor::Shape& shape,
                               const Domain& domain, ValueDistribution distribution,
                               tensor::PlacedStorage* into) {
  for (std::int64_t dim : shape) {
    if (dim < 0) {
      throw std::invalid_argument("generate_tensor: shape " + tensor::shape_to_string(shape) +
                                  " has a negative dimension");
    }
  }
  const ResolvedDomain resolved = resolve_or_throw(dtype, domain);
  const ValuePlan plan = plan_values(seed, dtype, distribution, resolved.any);

  tensor::Tensor out;
  out.dtype = dtype;
  out.shape = shape;
  out.strides = tensor::contiguous_strides(shape);
  const auto numel = static_cast<std::uint64_t>(tensor::shape_numel(shape));
  std::byte* bytes = nullptr;
  if (into) {
    bytes = into->bytes;
    out.data = std::move(into->storage);
  } else {
    out.data.resize(numel * tensor::dtype_size(dtype));
    bytes = out.data.data();
  }
  // Rows for zero_rows / one_hot run along the last axis; a scalar is one row of one element.
  const std::uint64_t row_len =
      !shape.empty() && shape.back() > 0 ? static_cast<std::uint64_t>(shape.back()) : 1;
  if (tensor::is_floating(dtype)) {
    fill_float(plan, seed, dtype, resolved, numel, row_len, bytes);
  } else {
    fill_int(plan, seed, dtype, resolved, numel, row_len, bytes);
  }
  return out;
}

std::string describe_values(std::uint64_t seed, tensor::DType dtype, const Domain& domain,
                            ValueDistribution distribution) {
  const ResolvedDomain resolved = resolve_or_throw(dtype, domain);
  return describe_plan(plan_values(seed, dtype, distribution, resolved.any), dtype);
}

}  // namespace gpuemu::rng
