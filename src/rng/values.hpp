// Tensor value generation on top of SeededRng: the regular, boundary and adversarial
// distributions inside a declared domain, rounded exactly to the dtype (spec: docs/rng.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tensor/tensor.hpp"

namespace gpuemu::rng {

// Numbers are persisted with failures: never renumber.
enum class ValueDistribution : int {
  mixed = 0,        // the default: each tensor picks one of the three below from its seed
  regular = 1,      // normal / uniform inside the domain
  boundary = 2,     // 0, +-1, smallest normal, subnormals, largest finite, powers of two (clamped to domain)
  adversarial = 3,  // large dynamic range, huge logits, near-cancellation, ties, zero rows, spikes, alternating signs
};
std::string_view distribution_name(ValueDistribution d);
std::optional<ValueDistribution> parse_distribution(std::string_view name);

// The values an input must support. `any` means every finite value of the dtype.
struct Domain {
  double lo = -1.0;
  double hi = 1.0;
  bool any = false;
};

// A contiguous tensor of the given dtype and shape, filled deterministically from `seed`.
// Same (seed, dtype, shape, domain, distribution) gives the same bytes in C++ and Python.
// Integer dtypes draw integers in [ceil(lo), floor(hi)]; bool draws 0/1.
tensor::Tensor generate_tensor(std::uint64_t seed, tensor::DType dtype, const tensor::Shape& shape,
                               const Domain& domain, ValueDistribution distribution);

}  // namespace gpuemu::rng
