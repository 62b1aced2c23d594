// Tests for case generation (fuzz/case.hpp) through its public header: the boundary-aware dim
// choice, seeds that replay (also when generated where a placer says), dtype/layout/distribution
// coverage, filters and schema resolution.
#include "fuzz/case.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuemu::fuzz {
namespace {

using tensor::DType;
using tensor::Layout;

// An op with a schema: x[M, N] and w[N, 8], M from a range and N from candidates.
config::OpConfig schema_op() {
  config::OpConfig op;
  op.name = "mm";
  op.spec = "mm";
  op.dtypes = {DType::float16, DType::float32, DType::bfloat16};
  op.layouts = {Layout::contiguous, Layout::transposed, Layout::strided};
  config::OpSchema schema;
  schema.dims = {{"M", 1, 300, {}}, {"N", 0, 0, {16, 48, 96}}};
  schema.inputs = {{"x", {std::string("M"), std::string("N")}}, {"w", {std::string("N"), std::int64_t{8}}}};
  op.schema = schema;
  op.input_names = {"x", "w"};
  return op;
}

bool same_case(const Case& a, const Case& b) {
  if (a.params.dtype != b.params.dtype || a.params.layout != b.params.layout ||
      a.params.distribution != b.params.distribution || a.dims != b.dims || a.input_order != b.input_order ||
      a.inputs.size() != b.inputs.size())
    return false;
  for (const auto& [name, t] : a.inputs) {
    const auto it = b.inputs.find(name);
    if (it == b.inputs.end()) return false;
    const tensor::Tensor& u = it->second;
    if (t.dtype != u.dtype || t.shape != u.shape || t.strides != u.strides) return false;
    if (t.data.size() != u.data.size() ||
        !std::equal(t.data.data(), t.data.data() + t.data.size(), u.data.data()))
      return false;
  }
  return true;
}

bool is_boundary(std::int64_t v, std::int64_t lo, std::int64_t hi) {
  static const std::set<std::int64_t> kPrimes = {2,  3,   5,   7,   13,  17,   31,   61,
                                                 97, 127, 193, 251, 509, 1021, 2039, 4093};
  if (v == lo || v == hi || v == 1 || kPrimes.contains(v)) return true;
  for (std::int64_t p = 2; p <= 2 * hi; p *= 2)
    if (v == p - 1 || v == p || v == p + 1) return true;
  return false;
}

TEST(ChooseDim, StaysInsideTheRangeAndAnEmptyRangeGivesItsLowEnd) {
  rng::SeededRng r(7);
  for (int i = 0; i < 5000; ++i) {
    const std::int64_t v = choose_dim(r, 3, 1000);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 1000);
  }
  EXPECT_EQ(choose_dim(r, 5, 5), 5);
  EXPECT_EQ(choose_dim(r, 9, 2), 9);  // hi below lo: lo, never a value outside what was asked
}

TEST(ChooseDim, ReachesEveryBoundaryValueOfASmallRangeAndSomeInteriorOnes) {
  // [1, 70]: the boundary set is 1, 70, the powers of two with their neighbours, and the primes.
  const std::set<std::int64_t> boundary = {1,  2,  3,  4,  5,  7,  8,  9,  13, 15,
                                           16, 17, 31, 32, 33, 61, 63, 64, 65, 70};
  rng::SeededRng r(11);
  std::set<std::int64_t> seen;
  int on_boundary = 0;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    const std::int64_t v = choose_dim(r, 1, 70);
    seen.insert(v);
    if (boundary.contains(v)) ++on_boundary;
  }
  for (std::int64_t v : boundary) EXPECT_TRUE(seen.contains(v)) << v << " never drawn";
  EXPECT_TRUE(seen.contains(40) || seen.contains(50) || seen.contains(69)) << "no uniform draw landed inside";
  // 60% of draws come from the boundary set and some uniform draws land on it too.
  EXPECT_GT(on_boundary, draws * 6 / 10);
  EXPECT_LT(on_boundary, draws * 9 / 10);
}

TEST(ChooseDim, ABigRangeFavoursSizesKernelsTripOn) {
  rng::SeededRng r(3);
  int boundary = 0;
  for (int i = 0; i < 4000; ++i) boundary += is_boundary(choose_dim(r, 1, 1 << 20), 1, 1 << 20) ? 1 : 0;
  // A uniform draw over a million sizes almost never hits the few dozen boundary sizes.
  EXPECT_GT(boundary, 4000 / 2);
}

TEST(GenerateCase, TheSeedAloneReplaysTheCaseByteForByte) {
  const config::OpConfig op = schema_op();
  for (std::uint64_t seed : {0ull, 1ull, 42ull, 0xdeadbeefull, ~0ull}) {
    auto a = generate_case(op, seed);
    auto b = generate_case(op, seed);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(same_case(*a, *b)) << "seed " << seed;
    EXPECT_EQ(a->seed, seed);
    EXPECT_EQ(a->op, "mm");
  }
  auto a = generate_case(op, 1);
  auto b = generate_case(op, 2);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(same_case(*a, *b));
}

// OpSession generates a contiguous case straight into its input file (InputPlacer): the case is the
// one generate_case makes on its own, byte for byte; another layout (which rewrites the bytes)
// and a placer that has no room make their own storage.
TEST(GenerateCase, ACaseGeneratedWhereAPlacerSaysIsTheSameCase) {
  const config::OpConfig op = schema_op();
  std::vector<std::vector<std::byte>> buffers;
  int asked = 0;
  const InputPlacer into_buffers = [&](const std::vector<std::size_t>& sizes) {
    ++asked;
    std::vector<tensor::PlacedStorage> placed;
    for (const std::size_t n : sizes) {
      auto& buffer = buffers.emplace_back(n + 64, std::byte{0x5A});  // stale bytes, as in a reused file
      auto keeper = std::make_shared<int>(0);
      placed.push_back({tensor::Storage::view(keeper, {buffer.data() + 32, n}), buffer.data() + 32});
    }
    return std::optional(std::move(placed));
  };
  const InputPlacer no_room = [&](const std::vector<std::size_t>&) {
    ++asked;
    return std::optional<std::vector<tensor::PlacedStorage>>();
  };
  int contiguous = 0, other = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    buffers.clear();
    buffers.reserve(4);  // the views point into them: no reallocation
    const auto own = generate_case(op, seed);
    ASSERT_TRUE(own);
    const int before = asked;
    const auto placed = generate_case(op, seed, into_buffers);
    ASSERT_TRUE(placed);
    EXPECT_TRUE(same_case(*own, *placed)) << "seed " << seed;
    const bool plain = own->params.layout == Layout::contiguous;
    EXPECT_EQ(asked - before, plain ? 1 : 0) << "seed " << seed;
    for (const auto& [name, t] : placed->inputs) EXPECT_EQ(t.data.is_view(), plain) << name;
    (plain ? contiguous : other) += 1;
    const auto fallback = generate_case(op, seed, no_room);
    ASSERT_TRUE(fallback);
    EXPECT_TRUE(same_case(*own, *fallback)) << "seed " << seed;
    for (const auto& [name, t] : fallback->inputs) EXPECT_FALSE(t.data.is_view()) << name;
  }
  EXPECT_GT(contiguous, 0);
  EXPECT_GT(other, 0);
}

TEST(GenerateCase, AddingAnInputLeavesTheOtherInputsValuesAlone) {
  config::OpConfig one;
  one.name = one.spec = "f";
  one.dtypes = {DType::float32};
  one.input_names = {"x"};
  config::OpConfig two = one;
  two.input_names = {"x", "y"};
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    auto a = generate_case(one, seed);
    auto b = generate_case(two, seed);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->inputs.at("x").to_doubles(), b->inputs.at("x").to_doubles()) << "seed " << seed;
    EXPECT_EQ(b->input_order, (std::vector<std::string>{"x", "y"}));
  }
}

TEST(GenerateCase, SchemaDimsResolveIntoEveryInputShape) {
  const config::OpConfig op = schema_op();
  std::set<std::int64_t> ns;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    auto c = generate_case(op, seed);
    ASSERT_TRUE(c);
    const std::int64_t m = c->dims.at("M");
    const std::int64_t n = c->dims.at("N");
    EXPECT_GE(m, 1);
    EXPECT_LE(m, 300);
    EXPECT_TRUE(n == 16 || n == 48 || n == 96) << n;  // candidates, never a range draw
    ns.insert(n);
    EXPECT_EQ(c->inputs.at("x").shape, (tensor::Shape{m, n}));
    EXPECT_EQ(c->inputs.at("w").shape, (tensor::Shape{n, 8}));
    EXPECT_EQ(c->shapes().at("w"), (tensor::Shape{n, 8}));
  }
  EXPECT_EQ(ns.size(), 3u);
}

TEST(GenerateCase, AnInputWithoutAShapeGetsTheDocumentedDefault) {
  config::OpConfig op;
  op.name = op.spec = "relu";
  op.input_names = {"x"};
  auto c = generate_case(op, 5);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->inputs.at("x").shape, (tensor::Shape{4, 64}));  // docs/configuration.md
}

TEST(GenerateCase, AnUndeclaredDimIsAConfigErrorNamingOpInputAndDim) {
  config::OpConfig op = schema_op();
  op.schema->inputs.push_back({"bias", {std::string("K")}});
  op.input_names.push_back("bias");
  auto c = generate_case(op, 1);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::config);
  EXPECT_EQ(
      c.error().message,
      "op 'mm': input 'bias' uses dim 'K', which [ops.schema] dims does not declare; add it, e.g. K = [1, "
      "128]");
}

TEST(CaseParams, SeedsCoverEveryListedDtypeLayoutAndDistributionAndNothingElse) {
  const config::OpConfig op = schema_op();
  std::set<DType> dtypes;
  std::set<Layout> layouts;
  std::set<rng::ValueDistribution> distributions;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const CaseParams p = case_params(op, seed);
    dtypes.insert(p.dtype);
    layouts.insert(p.layout);
    distributions.insert(p.distribution);
  }
  EXPECT_EQ(dtypes, (std::set<DType>{DType::float16, DType::float32, DType::bfloat16}));
  EXPECT_EQ(layouts, (std::set<Layout>{Layout::contiguous, Layout::transposed, Layout::strided}));
  EXPECT_EQ(distributions, (std::set<rng::ValueDistribution>{rng::ValueDistribution::regular,
                                                             rng::ValueDistribution::boundary,
                                                             rng::ValueDistribution::adversarial}));
}

TEST(GenerateCase, ALayoutChangesTheMemoryNotTheValues) {
  config::OpConfig contiguous = schema_op();
  contiguous.layouts = {Layout::contiguous};
  for (Layout layout : {Layout::transposed, Layout::strided}) {
    config::OpConfig laid_out = contiguous;
    laid_out.layouts = {layout};
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      auto a = generate_case(contiguous, seed);
      auto b = generate_case(laid_out, seed);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(b->params.layout, layout);
      const tensor::Tensor& x = b->inputs.at("x");
      EXPECT_EQ(a->inputs.at("x").to_doubles(), x.to_doubles())
          << tensor::layout_name(layout) << " seed " << seed;
      EXPECT_NE(x.strides, tensor::contiguous_strides(x.shape)) << tensor::layout_name(layout);
    }
  }
}

TEST(GenerateCase, AFixedInputDtypeAndItsDomainHoldWhateverTheCaseDraws) {
  config::OpConfig op;
  op.name = op.spec = "gather";
  op.dtypes = {DType::float16, DType::float32};
  op.input_names = {"x", "index"};
  config::InputSpec index;
  index.name = "index";
  index.dtype = DType::int64;
  index.domain = {0, 9, false};
  op.inputs["index"] = index;
  CaseFilter regular;
  regular.distribution = rng::ValueDistribution::regular;
  for (std::uint64_t i = 0; i < 20; ++i) {
    auto c = generate_case(op, case_seed(op, 99, "fuzz", i, regular));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->inputs.at("x").dtype, c->params.dtype);
    const tensor::Tensor& t = c->inputs.at("index");
    EXPECT_EQ(t.dtype, DType::int64);
    for (double v : t.to_doubles()) {
      ASSERT_GE(v, 0);
      ASSERT_LE(v, 9);
    }
  }
}

TEST(CaseSeed, IsDeterministicHonoursTheFilterAndSeparatesStreams) {
  const config::OpConfig op = schema_op();
  CaseFilter filter;
  filter.dtype = DType::bfloat16;
  filter.layout = Layout::strided;
  std::set<std::uint64_t> seeds;
  for (std::uint64_t i = 0; i < 30; ++i) {
    const std::uint64_t s = case_seed(op, 7, "fuzz", i, filter);
    EXPECT_EQ(s, case_seed(op, 7, "fuzz", i, filter));
    const CaseParams p = case_params(op, s);
    EXPECT_EQ(p.dtype, DType::bfloat16);
    EXPECT_EQ(p.layout, Layout::strided);
    seeds.insert(s);
  }
  EXPECT_EQ(seeds.size(), 30u);  // each index its own case
  EXPECT_NE(case_seed(op, 7, "fuzz", 0, {}), case_seed(op, 7, "test", 0, {}));
  EXPECT_NE(case_seed(op, 7, "fuzz", 0, {}), case_seed(op, 8, "fuzz", 0, {}));
}

TEST(CaseSeed, EveryImplementationOfAnOpMeetsTheSameCases) {
  config::OpConfig v1 = schema_op();
  v1.name = "mm/v1";
  v1.implementation = "v1";
  config::OpConfig v2 = v1;
  v2.name = "mm/v2_tail_bug";
  v2.implementation = "v2_tail_bug";
  for (std::uint64_t i = 0; i < 10; ++i) {
    const std::uint64_t s = case_seed(v1, 1, "test", i, {});
    EXPECT_EQ(s, case_seed(v2, 1, "test", i, {}));
    auto a = generate_case(v1, s);
    auto b = generate_case(v2, s);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(same_case(*a, *b));
  }
}

}  // namespace
}  // namespace gpuemu::fuzz
