// Tests for rng/values: domain checks and their messages, values inside the domain for every
// dtype and distribution, counter-based independence, and distribution names.
#include "rng/values.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

namespace gpuemu::rng {
namespace {

using tensor::DType;

constexpr std::array<DType, 10> kAllDTypes{DType::float16, DType::bfloat16, DType::float32, DType::float64,
                                           DType::int8,    DType::int16,    DType::int32,   DType::int64,
                                           DType::uint8,   DType::bool_};
constexpr std::array<ValueDistribution, 4> kAllDistributions{
    ValueDistribution::mixed, ValueDistribution::regular, ValueDistribution::boundary,
    ValueDistribution::adversarial};

TEST(Values, DistributionNamesRoundTrip) {
  for (auto d : kAllDistributions) {
    EXPECT_EQ(parse_distribution(distribution_name(d)), d);
  }
  EXPECT_EQ(parse_distribution("normal"), std::nullopt);
}

TEST(Values, CheckDomainMessagesNameTheDomainAndTheFix) {
  auto empty = check_domain(DType::float16, Domain{.lo = 0.1, .hi = 0.10001});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message,
            "domain [0.1, 0.10001] holds no float16 value; widen it or use a wider dtype");
  auto ints = check_domain(DType::int8, Domain{.lo = 0.2, .hi = 0.8});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().message, "domain [0.2, 0.8] holds no int8 value; widen it or use a float dtype");
  auto reversed = check_domain(DType::float32, Domain{.lo = 2, .hi = 1});
  ASSERT_FALSE(reversed);
  EXPECT_EQ(reversed.error().message, "domain [2, 1] is empty or NaN; write it as [lo, hi] with lo <= hi");
  EXPECT_FALSE(check_domain(DType::float32, Domain{.lo = std::nan(""), .hi = 1}));
  EXPECT_TRUE(check_domain(DType::float16, Domain{.lo = 0, .hi = std::numeric_limits<double>::infinity()}));
  EXPECT_TRUE(check_domain(DType::int64, Domain{.any = true}));
}

TEST(Values, EveryDTypeAndDistributionStaysInsideTheDomain) {
  const Domain domains[] = {Domain{}, Domain{.any = true}, Domain{.lo = 0.25, .hi = 1000.0}};
  for (DType dtype : kAllDTypes) {
    for (auto dist : kAllDistributions) {
      for (const Domain& domain : domains) {
        for (std::uint64_t seed = 0; seed < 6; ++seed) {
          const tensor::Tensor t = generate_tensor(seed, dtype, {4, 7}, domain, dist);
          ASSERT_EQ(t.numel(), 28);
          ASSERT_TRUE(t.is_contiguous());
          for (double v : t.to_doubles()) {
            ASSERT_TRUE(std::isfinite(v));
            if (dtype == DType::bool_) {
              ASSERT_TRUE(v == 0 || v == 1);
            } else if (!domain.any) {
              // 0.25 and 1000 are representable in every float dtype; ints use [1, 1000] / [-1, 1].
              ASSERT_GE(v, domain.lo < 0 ? -1.0 : (tensor::is_floating(dtype) ? 0.25 : 1.0));
              ASSERT_LE(v, domain.hi);
            }
          }
        }
      }
    }
  }
}

TEST(Values, ElementsDoNotDependOnTensorSize) {
  const auto small =
      generate_tensor(5, DType::float32, {10}, Domain{.any = true}, ValueDistribution::regular);
  const auto large =
      generate_tensor(5, DType::float32, {1000}, Domain{.any = true}, ValueDistribution::regular);
  EXPECT_TRUE(std::equal(small.data.begin(), small.data.end(), large.data.begin()));
}

TEST(Values, BoundaryOnFloat16ReachesSubnormalsAndMax) {
  const auto t = generate_tensor(9, DType::float16, {4000}, Domain{.any = true}, ValueDistribution::boundary);
  const auto v = t.to_doubles();
  for (double want : {0x1p-24, 65504.0, -65504.0, 0x1p-14, 1.0}) {
    EXPECT_NE(std::find(v.begin(), v.end(), want), v.end()) << want;
  }
}

TEST(Values, DescribeNamesThePlanAndMixedCoversAllKinds) {
  std::set<std::string> kinds;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::string d = describe_values(seed, DType::float32, Domain{}, ValueDistribution::mixed);
    kinds.insert(d.substr(0, d.find('/')));
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"adversarial", "boundary", "regular"}));
  EXPECT_EQ(describe_values(1, DType::bool_, Domain{}, ValueDistribution::boundary), "boundary");
  EXPECT_EQ(describe_values(1, DType::float32, Domain{.any = true}, ValueDistribution::regular),
            "regular/scaled_bell");
}

TEST(Values, BadArgumentsThrow) {
  EXPECT_THROW(generate_tensor(1, DType::int8, {2}, Domain{.lo = 0.2, .hi = 0.8}, ValueDistribution::regular),
               std::invalid_argument);
  EXPECT_THROW(generate_tensor(1, DType::float32, {2, -1}, Domain{}, ValueDistribution::regular),
               std::invalid_argument);
}

TEST(Values, EmptyAndScalarShapes) {
  EXPECT_TRUE(generate_tensor(1, DType::float16, {0, 3}, Domain{}, ValueDistribution::mixed).data.empty());
  const auto scalar =
      generate_tensor(1, DType::float64, {}, Domain{.any = true}, ValueDistribution::adversarial);
  EXPECT_EQ(scalar.data.size(), 8u);
}

}  // namespace
}  // namespace gpuemu::rng
