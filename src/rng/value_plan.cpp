// Per-tensor decisions of value generation: the domain resolved to dtype values and the choices
// drawn from SeededRng(derive_seed(seed, "values/tensor")) in the order docs/rng.md fixes.
#include "rng/value_plan.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string_view>

#include "rng/seeded_rng.hpp"
#include "tensor/half.hpp"

namespace gpuemu::rng {
namespace {

using tensor::DType;

constexpr std::array<std::string_view, 7> kFloatPatternNames{
    "dynamic_range", "huge_logits", "near_cancellation", "ties", "zero_rows", "one_hot", "alternating_signs"};
constexpr std::array<std::string_view, 4> kIntPatternNames{"extremes", "ties", "zero_rows", "one_hot"};
constexpr std::array<std::string_view, 3> kModeNames{"uniform", "bell", "scaled_bell"};

double max_finite(DType dtype) {
  switch (dtype) {
    case DType::float16:
      return 65504.0;
    case DType::bfloat16:
      return 0x1.FEp127;
    case DType::float32:
      return static_cast<double>(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

std::pair<std::int64_t, std::int64_t> int_range(DType dtype) {
  switch (dtype) {
    case DType::int8:
      return {-128, 127};
    case DType::int16:
      return {-32768, 32767};
    case DType::int32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    case DType::uint8:
      return {0, 255};
    case DType::bool_:
      return {0, 1};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  }
}

// Sign-magnitude 16-bit neighbour, matching numpy.nextafter on float16 (zeros step to the
// smallest subnormal of the direction's sign).
std::uint16_t step16(std::uint16_t bits, bool up) {
  if (bits == 0x8000) {
    bits = 0;
  }
  if (bits == 0 && !up) {
    return 0x8001;
  }
  const bool larger_magnitude = up != ((bits & 0x8000) != 0);
  return larger_magnitude ? bits + 1 : bits - 1;
}

std::string empty_domain(const Domain& d, DType dtype, std::string_view fix) {
  return fmt::format("domain [{}, {}] holds no {} value; {}", d.lo, d.hi, tensor::dtype_name(dtype), fix);
}

}  // namespace

double dtype_round(double v, DType dtype) {
  switch (dtype) {
    case DType::float16:
      return tensor::f16_to_double(tensor::double_to_f16(v));
    case DType::bfloat16:
      return tensor::bf16_to_double(tensor::double_to_bf16(v));
    case DType::float32:
      return static_cast<double>(static_cast<float>(v));
    default:
      return v;
  }
}

double dtype_step(double v, DType dtype, bool up) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (dtype) {
    case DType::float16:
      return tensor::f16_to_double(step16(tensor::double_to_f16(v), up));
    case DType::bfloat16:
      return tensor::bf16_to_double(step16(tensor::double_to_bf16(v), up));
    case DType::float32:
      return static_cast<double>(std::nextafter(static_cast<float>(v), static_cast<float>(up ? inf : -inf)));
    default:
      return std::nextafter(v, up ? inf : -inf);
  }
}

Expected<ResolvedDomain> resolve_domain(DType dtype, const Domain& domain) {
  ResolvedDomain out;
  out.any = domain.any;
  if (!domain.any && (std::isnan(domain.lo) || std::isnan(domain.hi) || domain.lo > domain.hi)) {
    return fail(ErrorKind::config,
                fmt::format("domain [{}, {}] is empty or NaN; write it as [lo, hi] with lo <= hi", domain.lo,
                            domain.hi));
  }
  if (!tensor::is_floating(dtype)) {
    auto [tmin, tmax] = int_range(dtype);
    out.ilo = tmin;
    out.ihi = tmax;
    if (domain.any || dtype == DType::bool_) {
      return out;
    }
    // Work in doubles up to the cast: ceil/floor of a double beyond int64 would be undefined.
    const double ceil_lo = std::ceil(domain.lo);
    const double floor_hi = std::floor(domain.hi);
    if (ceil_lo >= 0x1p63 || floor_hi < -0x1p63) {
      return fail(ErrorKind::config, empty_domain(domain, dtype, "widen it or use a float dtype"));
    }
    if (domain.lo > static_cast<double>(tmin)) {
      out.ilo = std::max(static_cast<std::int64_t>(ceil_lo), tmin);
    }
    if (domain.hi < static_cast<double>(tmax)) {
      out.ihi = std::min(static_cast<std::int64_t>(floor_hi), tmax);
    }
    if (out.ilo > out.ihi) {
      return fail(ErrorKind::config, empty_domain(domain, dtype, "widen it or use a float dtype"));
    }
    return out;
  }
  const double big = max_finite(dtype);
  if (domain.any) {
    out.lo = -big;
    out.hi = big;
    return out;
  }
  const double lo = std::max(domain.lo, -big);
  const double hi = std::min(domain.hi, big);
  if (lo <= hi) {
    out.lo = dtype_round(lo, dtype);
    if (out.lo < lo) {
      out.lo = dtype_step(out.lo, dtype, true);
    }
    out.hi = dtype_round(hi, dtype);
    if (out.hi > hi) {
      out.hi = dtype_step(out.hi, dtype, false);
    }
    if (out.lo <= out.hi) {
      return out;
    }
  }
  return fail(ErrorKind::config, empty_domain(domain, dtype, "widen it or use a wider dtype"));
}

ValuePlan plan_values(std::uint64_t seed, DType dtype, ValueDistribution distribution, bool any_domain) {
  SeededRng rng(derive_seed(seed, "values/tensor"));
  ValuePlan plan;
  if (distribution == ValueDistribution::mixed) {
    constexpr std::array<ValueDistribution, 3> kChoices{
        ValueDistribution::regular, ValueDistribution::boundary, ValueDistribution::adversarial};
    distribution = kChoices[rng.gen_range(0, 3)];
  }
  plan.distribution = distribution;
  if (dtype == DType::bool_) {
    return plan;
  }
  const bool floating = tensor::is_floating(dtype);
  if (distribution == ValueDistribution::regular && floating) {
    plan.mode = any_domain ? RegularMode::scaled_bell : static_cast<RegularMode>(rng.gen_range(0, 2));
  } else if (distribution == ValueDistribution::adversarial) {
    bool ties = false;
    if (floating) {
      plan.float_pattern = static_cast<FloatPattern>(rng.gen_range(0, kFloatPatternNames.size()));
      ties = plan.float_pattern == FloatPattern::ties;
    } else {
      plan.int_pattern = static_cast<IntPattern>(rng.gen_range(0, kIntPatternNames.size()));
      ties = plan.int_pattern == IntPattern::ties;
    }
    if (ties) {
      const std::uint64_t k = rng.gen_range(1, 5);
      for (std::uint64_t j = 0; j < k; ++j) {
        if (floating) {
          plan.float_pool.push_back(rng.next_f64());
        } else {
          plan.int_pool.push_back(rng.next_u64());
        }
      }
    }
  }
  return plan;
}

std::string describe_plan(const ValuePlan& plan, DType dtype) {
  std::string out(distribution_name(plan.distribution));
  if (dtype == DType::bool_) {
    return out;
  }
  const bool floating = tensor::is_floating(dtype);
  if (plan.distribution == ValueDistribution::regular && floating) {
    out.append("/").append(kModeNames[static_cast<int>(plan.mode)]);
  } else if (plan.distribution == ValueDistribution::adversarial) {
    out.append("/").append(floating ? kFloatPatternNames[static_cast<int>(plan.float_pattern)]
                                    : kIntPatternNames[static_cast<int>(plan.int_pattern)]);
  }
  return out;
}

}  // namespace gpuemu::rng
