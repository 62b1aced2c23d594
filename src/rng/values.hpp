// Tensor value generation on top of SeededRng: the regular, boundary and adversarial
// distributions inside a declared domain, rounded exactly to the dtype (spec: docs/rng.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::rng {

// Numbers are persisted with failures: never renumber.
enum class ValueDistribution : int {
  mixed = 0,     // the default: each tensor picks one of the three below from its seed
  regular = 1,   // normal / uniform inside the domain
  boundary = 2,  // 0, +-1, smallest normal, subnormals, largest finite, powers of two (clamped to domain)
  adversarial =
      3,  // large dynamic range, huge logits, near-cancellation, ties, zero rows, spikes, alternating signs
};
std::string_view distribution_name(ValueDistribution d);
std::optional<ValueDistribution> parse_distribution(std::string_view name);

// The values an input must support. `any` means every finite value of the dtype. Infinite ends
// are clamped to the dtype's finite range ([0, inf] = every non-negative finite value).
struct Domain {
  double lo = -1.0;
  double hi = 1.0;
  bool any = false;
};

// Succeeds when generate_tensor can fill `dtype` from `domain`: ends not NaN, lo <= hi, and at
// least one value of the dtype inside. The message names the domain and the fix; callers prefix
// the input's name. Bool ignores the domain's values.
Expected<void> check_domain(tensor::DType dtype, const Domain& domain);

// A contiguous tensor of the given dtype and shape, filled deterministically from `seed`.
// Same (seed, dtype, shape, domain, distribution) gives the same bytes in C++ and Python.
// Integer dtypes draw integers in [ceil(lo), floor(hi)]; bool draws 0/1.
// Throws std::invalid_argument for a domain that check_domain rejects (a caller's bug: config
// validation runs check_domain first).
// With `into`, the bytes are written through into->bytes and the tensor's storage is
// into->storage (shape_numel(shape) * dtype_size(dtype) bytes laid out by the caller, e.g. in the
// input file another process reads: OpSession), without a buffer of its own.
tensor::Tensor generate_tensor(std::uint64_t seed, tensor::DType dtype, const tensor::Shape& shape,
                               const Domain& domain, ValueDistribution distribution,
                               tensor::PlacedStorage* into = nullptr);

// What generate_tensor draws for these arguments: "regular/uniform", "boundary",
// "adversarial/ties", ... (for reports and replay messages). Throws like generate_tensor.
std::string describe_values(std::uint64_t seed, tensor::DType dtype, const Domain& domain,
                            ValueDistribution distribution);

}  // namespace gpuemu::rng
