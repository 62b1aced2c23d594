// Tests for fill_float's block path (rng/fill_float.cpp): the regular distribution and the row
// patterns, computed a block at a time, against the scalar formulas of docs/rng.md, bit for bit; and
// every instruction set's copy of the block loops against the baseline copy.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "rng/counter.hpp"
#include "rng/seeded_rng.hpp"
#include "rng/value_plan.hpp"
#include "tensor/half.hpp"

namespace gpuemu::rng {
namespace {

using tensor::DType;

// docs/rng.md 4.3-4.4 and 5 for the regular distribution, one element at a time, written out again
// here so the test does not share code with what it checks.
std::vector<std::byte> scalar_regular(RegularMode mode, std::uint64_t seed, DType dtype,
                                      const ResolvedDomain& d, std::uint64_t n) {
  const std::uint64_t a = derive_seed(seed, "values/a"), b = derive_seed(seed, "values/b");
  const std::uint64_t c = derive_seed(seed, "values/c"), dd = derive_seed(seed, "values/d");
  const double mid = 0.5 * d.lo + 0.5 * d.hi, half = 0.5 * d.hi - 0.5 * d.lo;
  std::vector<std::byte> out(n * tensor::dtype_size(dtype));
  for (std::uint64_t i = 0; i < n; ++i) {
    double x = 0;
    if (mode == RegularMode::uniform) {
      const double u = static_cast<double>(counter_u64(c, i) >> 11) * 0x1p-53;
      x = d.lo * (1.0 - u) + d.hi * u;
    } else {
      const std::uint64_t ua = counter_u64(a, i), ub = counter_u64(b, i);
      const double bell =
          static_cast<double>((ua >> 32) + (ua & 0xFFFFFFFFu) + (ub >> 32) + (ub & 0xFFFFFFFFu)) * 0x1p-33 -
          1.0;
      x = mode == RegularMode::bell ? mid + bell * half
                                    : bell * std::ldexp(1.0, static_cast<int>(mulhi(counter_u64(dd, i), 9)));
    }
    x = x < d.lo ? d.lo : (x > d.hi ? d.hi : x);
    std::byte* at = out.data() + i * tensor::dtype_size(dtype);
    if (dtype == DType::float32) {
      const float f = static_cast<float>(x);
      std::memcpy(at, &f, 4);
    } else if (dtype == DType::float64) {
      std::memcpy(at, &x, 8);
    } else {
      const std::uint16_t h = dtype == DType::float16 ? tensor::double_to_f16(x) : tensor::double_to_bf16(x);
      std::memcpy(at, &h, 2);
    }
  }
  return out;
}

TEST(FillFloat, RegularBlocksMatchTheScalarFormulasBitForBit) {
  struct Mode {
    RegularMode mode;
    Domain domain;
  };
  const std::vector<Mode> modes = {{RegularMode::uniform, Domain{-3.0, 5.0, false}},
                                   {RegularMode::bell, Domain{-3.0, 5.0, false}},
                                   {RegularMode::bell, Domain{0.25, 1000.0, false}},
                                   {RegularMode::scaled_bell, Domain{0, 0, true}}};
  for (const auto& [mode, domain] : modes) {
    for (DType dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
      const ResolvedDomain resolved = *resolve_domain(dtype, domain);
      ValuePlan plan;
      plan.distribution = ValueDistribution::regular;
      plan.mode = mode;
      // Around the block size (256) and its multiples, and a size no vector width divides.
      for (std::uint64_t n : {0u, 1u, 7u, 255u, 256u, 257u, 1000u, 4099u}) {
        const std::uint64_t seed = 1000 + n;
        std::vector<std::byte> got(n * tensor::dtype_size(dtype));
        fill_float(plan, seed, dtype, resolved, n, 16, got.data());
        EXPECT_EQ(got, scalar_regular(mode, seed, dtype, resolved, n))
            << "mode " << static_cast<int>(mode) << " dtype " << tensor::dtype_name(dtype) << " n " << n;
      }
    }
  }
}

// zero_rows and one_hot take each row's draw once (docs/rng.md 4.5): rows that cross a block of
// 256 elements, start inside one, or are longer than one follow the per-element formulas, written
// out again here (float64 in [-3, 5]: no rounding, so the check is exact).
TEST(FillFloat, RowPatternsFollowTheirRowsAcrossBlocks) {
  const ResolvedDomain d = *resolve_domain(DType::float64, Domain{-3.0, 5.0, false});
  const double mid = 0.5 * d.lo + 0.5 * d.hi, half = 0.5 * d.hi - 0.5 * d.lo, zero = 0.0;
  for (FloatPattern pattern : {FloatPattern::zero_rows, FloatPattern::one_hot}) {
    std::uint64_t plan_seed = 0;
    while (plan_values(plan_seed, DType::float64, ValueDistribution::adversarial, false).float_pattern !=
           pattern)
      ASSERT_LT(++plan_seed, 100000u);
    const ValuePlan plan = plan_values(plan_seed, DType::float64, ValueDistribution::adversarial, false);
    for (std::uint64_t row_len : {1u, 7u, 100u, 256u, 300u, 1000u}) {
      const std::uint64_t n = 4099, seed = 77 + row_len;
      const std::uint64_t a = derive_seed(seed, "values/a"), b = derive_seed(seed, "values/b");
      const std::uint64_t rows = derive_seed(seed, "values/row");
      std::vector<double> got(n);
      fill_float(plan, seed, DType::float64, d, n, row_len, reinterpret_cast<std::byte*>(got.data()));
      int differ = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t draw = counter_u64(rows, i / row_len);
        double want = zero;
        if (pattern == FloatPattern::one_hot) {
          want = i % row_len == mulhi(draw, row_len) ? d.hi : zero;
        } else if ((draw >> 63) == 0) {
          const std::uint64_t ua = counter_u64(a, i), ub = counter_u64(b, i);
          const double bell =
              static_cast<double>((ua >> 32) + (ua & 0xFFFFFFFFu) + (ub >> 32) + (ub & 0xFFFFFFFFu)) *
                  0x1p-33 -
              1.0;
          want = mid + bell * half;
        }
        if (std::bit_cast<std::uint64_t>(got[i]) != std::bit_cast<std::uint64_t>(want) && differ++ < 3)
          ADD_FAILURE() << describe_plan(plan, DType::float64) << " row_len " << row_len << " element " << i
                        << ": " << got[i] << ", want " << want;
      }
    }
  }
}

// Each instruction set's copy of the block loops gives the baseline copy's bytes, for every
// distribution and pattern: a failing case replays the same on a CI runner without AVX-512 as on
// the machine that found it. Copies this CPU cannot run fall back to the best one below (and then
// compare that one again).
TEST(FillFloat, EveryInstructionSetGivesTheBaselineBytes) {
  std::vector<ValuePlan> plans;
  for (RegularMode mode : {RegularMode::uniform, RegularMode::bell, RegularMode::scaled_bell}) {
    ValuePlan plan;
    plan.mode = mode;
    plans.push_back(plan);
  }
  ValuePlan boundary;
  boundary.distribution = ValueDistribution::boundary;
  plans.push_back(boundary);
  // One planned adversarial plan per pattern (planning fills what the pattern needs, e.g. ties' pool).
  for (int pattern = 0; pattern <= static_cast<int>(FloatPattern::alternating_signs); ++pattern) {
    std::uint64_t seed = 0;
    while (plan_values(seed, DType::float32, ValueDistribution::adversarial, false).float_pattern !=
           static_cast<FloatPattern>(pattern)) {
      ASSERT_LT(++seed, 100000u) << "no seed plans pattern " << pattern;
    }
    plans.push_back(plan_values(seed, DType::float32, ValueDistribution::adversarial, false));
  }
  for (const ValuePlan& plan : plans) {
    const bool any = plan.mode == RegularMode::scaled_bell;
    for (DType dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
      const ResolvedDomain domain =
          *resolve_domain(dtype, any ? Domain{0, 0, true} : Domain{-3.0, 5.0, false});
      for (std::uint64_t n : {1u, 255u, 256u, 257u, 4099u}) {
        const std::uint64_t seed = 40 + n;
        std::vector<std::byte> baseline(n * tensor::dtype_size(dtype));
        fill_float(plan, seed, dtype, domain, n, 64, baseline.data(), util::Isa::baseline);
        for (util::Isa isa : {util::Isa::avx2, util::Isa::avx512}) {
          std::vector<std::byte> got(baseline.size());
          fill_float(plan, seed, dtype, domain, n, 64, got.data(), isa);
          EXPECT_EQ(got, baseline) << describe_plan(plan, dtype) << " dtype " << tensor::dtype_name(dtype)
                                   << " n " << n << " isa " << static_cast<int>(isa);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpuemu::rng
