// Internal to rng: the per-tensor decisions of value generation (resolved domain, distribution,
// pattern, ties pool) and the fill functions that turn them into bytes (docs/rng.md section 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rng/values.hpp"
#include "tensor/dtype.hpp"
#include "util/cpu_isa.hpp"
#include "util/error.hpp"

namespace gpuemu::rng {

// Indices are part of the spec (drawn with gen_range): never reorder.
enum class FloatPattern : int {
  dynamic_range = 0,
  huge_logits = 1,
  near_cancellation = 2,
  ties = 3,
  zero_rows = 4,
  one_hot = 5,
  alternating_signs = 6,
};
enum class IntPattern : int { extremes = 0, ties = 1, zero_rows = 2, one_hot = 3 };
enum class RegularMode : int { uniform = 0, bell = 1, scaled_bell = 2 };  // scaled_bell: domain "any"

// The smallest and largest dtype values inside the domain.
struct ResolvedDomain {
  double lo = 0;  // floats: representable in the dtype
  double hi = 0;
  std::int64_t ilo = 0;  // integer dtypes
  std::int64_t ihi = 0;
  bool any = false;
};
Expected<ResolvedDomain> resolve_domain(tensor::DType dtype, const Domain& domain);

struct ValuePlan {
  ValueDistribution distribution = ValueDistribution::regular;  // never mixed after planning
  RegularMode mode = RegularMode::uniform;
  FloatPattern float_pattern = FloatPattern::dynamic_range;
  IntPattern int_pattern = IntPattern::extremes;
  std::vector<double> float_pool;       // ties: next_f64 draws
  std::vector<std::uint64_t> int_pool;  // ties: next_u64 draws
};
ValuePlan plan_values(std::uint64_t seed, tensor::DType dtype, ValueDistribution distribution,
                      bool any_domain);
std::string describe_plan(const ValuePlan& plan, tensor::DType dtype);

// The representable neighbour of v (itself representable) above or below it in dtype.
double dtype_step(double v, tensor::DType dtype, bool up);
// v rounded to nearest even in dtype, back as a double.
double dtype_round(double v, tensor::DType dtype);

// Fill `out` (numel elements of the dtype, little-endian) following the plan.
void fill_float(const ValuePlan& plan, std::uint64_t seed, tensor::DType dtype, const ResolvedDomain& domain,
                std::uint64_t numel, std::uint64_t row_len, std::byte* out);
// The same with the block loops compiled for `isa` (or the best set below it this CPU runs): every
// set must give the same bytes, which tests/unit/rng/fill_float_test.cpp checks set by set.
void fill_float(const ValuePlan& plan, std::uint64_t seed, tensor::DType dtype, const ResolvedDomain& domain,
                std::uint64_t numel, std::uint64_t row_len, std::byte* out, util::Isa isa);
void fill_int(const ValuePlan& plan, std::uint64_t seed, tensor::DType dtype, const ResolvedDomain& domain,
              std::uint64_t numel, std::uint64_t row_len, std::byte* out);

}  // namespace gpuemu::rng
