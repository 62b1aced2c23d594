// engine::minimize against fake runners: every strategy keeps the failure kind, never grows a dim
// and replays from its own inputs, and runs only its own phase; the values phase survives accepted edits (it
// used to iterate the input names of a case it had just replaced); dims bisect to the smallest failing size,
// then tile edges; a run out of budget says so; inputs that disagree with the schema are not sliced.
#include "engine/minimize.hpp"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "engine_test_support.hpp"
#include "rng/values.hpp"

namespace gpuemu::engine {
namespace {

using testing::FakeRunners;

// A case of `op` with the given dims and regular values for every schema input.
fuzz::Case make_case(const config::OpConfig& op, const std::map<std::string, std::int64_t>& dims,
                     std::uint64_t seed) {
  fuzz::Case c;
  c.op = op.name;
  c.seed = seed;
  c.dims = dims;
  c.input_order = op.input_names;
  for (const auto& [input, refs] : op.schema->inputs) {
    tensor::Shape shape;
    for (const auto& ref : refs) {
      shape.push_back(std::holds_alternative<std::int64_t>(ref) ? std::get<std::int64_t>(ref)
                                                                : dims.at(std::get<std::string>(ref)));
    }
    c.inputs[input] = rng::generate_tensor(rng::derive_seed(seed, "input/" + input), tensor::DType::float32,
                                           shape, rng::Domain{}, rng::ValueDistribution::regular);
  }
  return c;
}

bool no_larger(const fuzz::Case& small, const fuzz::Case& big) {
  for (const auto& [name, t] : big.inputs) {
    const auto& s = small.inputs.at(name).shape;
    if (s.size() != t.shape.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] > t.shape[i]) return false;
    }
  }
  return true;
}

// The ways an op can fail, each produced by a fake that is right up to the first block (N <= 32)
// and wrong past it.
struct FailureMaker {
  const char* name;
  testing::FakeFn op;
};

proc::RunOutcome past_first_block(const proc::RunRequest& request,
                                  const std::function<proc::RunOutcome()>& wrong) {
  return testing::input(request, "x").shape.back() > 32 ? wrong() : testing::cumsum_ok(request);
}

std::vector<FailureMaker> failure_makers() {
  return {
      {"mismatch", testing::cumsum_no_carry},
      {"nan",
       [](const proc::RunRequest& r) {
         return past_first_block(r, [&] {
           auto out = testing::cumsum_ok(r);
           auto values = out.outputs["out"].to_doubles();
           values.back() = std::nan("");
           out.outputs["out"] =
               tensor::Tensor::from_doubles(tensor::DType::float32, out.outputs["out"].shape, values);
           return out;
         });
       }},
      {"shape",
       [](const proc::RunRequest& r) {
         return past_first_block(r, [&] {
           const auto& x = testing::input(r, "x");
           return testing::answer(tensor::Tensor::zeros(x.dtype, {x.shape[0], x.shape[1] - 1}));
         });
       }},
      {"op_error",
       [](const proc::RunRequest& r) {
         return past_first_block(r, [] {
           proc::RunOutcome crashed;
           crashed.failure = proc::RunFailure::crashed;
           crashed.message = "op exited with status 1";
           return crashed;
         });
       }},
  };
}

class MinimizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runners_.add("cumsum_reference", testing::cumsum_reference);
    runners_.add("cumsum_ok", testing::cumsum_ok);
    runners_.add("cumsum_no_carry", testing::cumsum_no_carry);
  }
  FakeRunners runners_;
};

TEST_F(MinimizeTest, ValuesPhaseSurvivesAcceptedEdits) {
  // The reported crash: a one-input op whose values phase accepts an edit. The old code kept a
  // reference into the replaced case's input names (use after free: a segfault or
  // "Tensor::decode_range: view reaches past its data").
  const auto config =
      testing::fake_config(testing::cumsum_op("cumsum", "cumsum_no_carry", "M = [1, 16], N = [1, 825]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  const auto original = make_case(op, {{"M", 16}, {"N", 825}}, 11);
  for (auto strategy : {MinimizeStrategy::values, MinimizeStrategy::all}) {
    MinimizeOptions options;
    options.strategy = strategy;
    options.max_iters = 400;
    const auto result = minimize(session, original, options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->minimized.verdict.kind, check::FailureKind::mismatch);
    EXPECT_GT(result->steps, 0);
    // Values were zeroed: most of the input is 0 now.
    const auto values = result->minimized_case.inputs.at("x").to_doubles();
    EXPECT_GT(std::count(values.begin(), values.end(), 0.0), static_cast<long>(values.size() / 2));
  }
}

TEST_F(MinimizeTest, EveryStrategyAndFailureKindKeepsTheKindNeverGrowsAndReplays) {
  for (const auto& maker : failure_makers()) {
    FakeRunners runners;
    runners.add("cumsum_reference", testing::cumsum_reference);
    runners.add("op", maker.op);
    const auto config = testing::fake_config(testing::cumsum_op("op", "op", "M = [1, 8], N = [1, 300]"));
    const auto& op = config.ops.front();
    OpSession session(config, op, runners.factory());
    for (std::uint64_t seed : {1, 2}) {
      const auto original = make_case(op, {{"M", 5}, {"N", 200 + static_cast<std::int64_t>(seed)}}, seed);
      for (auto strategy : {MinimizeStrategy::dims, MinimizeStrategy::values, MinimizeStrategy::all}) {
        SCOPED_TRACE(std::string(maker.name) + " strategy " + std::to_string(static_cast<int>(strategy)));
        MinimizeOptions options;
        options.strategy = strategy;
        options.max_iters = 120;
        const auto result = minimize(session, original, options);
        ASSERT_TRUE(result) << result.error().message;
        const auto kind = result->original.verdict.kind;
        EXPECT_NE(kind, check::FailureKind::none);
        EXPECT_EQ(result->minimized.verdict.kind, kind);
        EXPECT_TRUE(no_larger(result->minimized_case, original));
        if (strategy != MinimizeStrategy::values) {
          EXPECT_EQ(result->minimized_case.inputs.at("x").shape, (tensor::Shape{1, 33}));
        }
        // The minimized case replays from its inputs alone (what the store keeps as its snapshot).
        ASSERT_TRUE(result->minimized.inputs);
        fuzz::Case replay = result->minimized_case;
        replay.inputs = *result->minimized.inputs;
        OpSession fresh(config, op, runners.factory());
        const auto again = fresh.run_case(replay);
        ASSERT_TRUE(again);
        EXPECT_EQ(again->verdict.kind, kind);
        EXPECT_EQ(again->verdict.message, result->minimized.verdict.message);
      }
    }
  }
}

TEST_F(MinimizeTest, EachStrategyRunsOnlyItsOwnPhase) {
  // dims slices the inputs and leaves every value as it was; values edits values at the original
  // shape. A strategy that ran the other phase too would still keep the kind, so check both sides.
  const auto config =
      testing::fake_config(testing::cumsum_op("cumsum", "cumsum_no_carry", "M = [1, 8], N = [1, 300]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  const auto original = make_case(op, {{"M", 5}, {"N", 201}}, 3);
  const auto before = original.inputs.at("x").to_doubles();
  const std::set<double> original_values(before.begin(), before.end());
  ASSERT_FALSE(original_values.contains(0.0));

  MinimizeOptions options;
  options.max_iters = 200;
  options.strategy = MinimizeStrategy::dims;
  const auto dims = minimize(session, original, options);
  ASSERT_TRUE(dims) << dims.error().message;
  EXPECT_EQ(dims->minimized.verdict.kind, check::FailureKind::mismatch);
  EXPECT_EQ(dims->minimized_case.inputs.at("x").shape, (tensor::Shape{1, 33}));
  for (double v : dims->minimized_case.inputs.at("x").to_doubles()) {
    EXPECT_TRUE(original_values.contains(v)) << v << " is not a value of the original case";
  }

  options.strategy = MinimizeStrategy::values;
  const auto values = minimize(session, original, options);
  ASSERT_TRUE(values) << values.error().message;
  EXPECT_EQ(values->minimized.verdict.kind, check::FailureKind::mismatch);
  EXPECT_EQ(values->minimized_case.inputs.at("x").shape, original.inputs.at("x").shape);
  EXPECT_EQ(values->minimized_case.dims, original.dims);
  const auto after = values->minimized_case.inputs.at("x").to_doubles();
  EXPECT_GT(std::count(after.begin(), after.end(), 0.0), 0) << "the values phase changed nothing";
}

TEST_F(MinimizeTest, DimsBisectToTheSmallestFailingSize) {
  // Failing for every N > 32: 4095 -> 33 takes about 2 log2(4095) runs, not thousands.
  const auto config =
      testing::fake_config(testing::cumsum_op("cumsum", "cumsum_no_carry", "M = [1, 4], N = [1, 4095]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  MinimizeOptions options;
  options.strategy = MinimizeStrategy::dims;
  options.max_iters = 60;
  const auto result = minimize(session, make_case(op, {{"M", 3}, {"N", 4095}}, 5), options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->minimized_case.inputs.at("x").shape, (tensor::Shape{1, 33}));
  EXPECT_EQ(result->minimized_case.dims.at("N"), 33);
  EXPECT_FALSE(result->out_of_budget_in.has_value());
  EXPECT_LE(result->attempts, 60);
}

TEST_F(MinimizeTest, AFailureThatNeedsALongRowBisectsInsteadOfSteppingByOne) {
  // Errors that only exceed the tolerance past 3000 elements: the old search tried every smaller
  // candidate size before each step and took 200 runs for 4095 -> 4091.
  runners_.add("long_rows", [](const proc::RunRequest& r) {
    auto out = testing::cumsum_ok(r);
    if (testing::input(r, "x").shape.back() >= 3000) {
      auto values = out.outputs["out"].to_doubles();
      for (auto& v : values) v += 1.0;
      out.outputs["out"] =
          tensor::Tensor::from_doubles(tensor::DType::float32, out.outputs["out"].shape, values);
    }
    return out;
  });
  const auto config =
      testing::fake_config(testing::cumsum_op("long", "long_rows", "M = [1, 4], N = [1, 4095]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  MinimizeOptions options;
  options.strategy = MinimizeStrategy::dims;
  options.max_iters = 80;
  const auto result = minimize(session, make_case(op, {{"M", 4}, {"N", 4095}}, 2), options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->minimized_case.inputs.at("x").shape, (tensor::Shape{1, 3000}));
  EXPECT_FALSE(result->out_of_budget_in.has_value()) << result->attempts << " runs";
}

TEST_F(MinimizeTest, TileEdgesFindFailuresBisectionSkipsOver) {
  // Fails for N > 64 except at multiples of 32: bisection alone can stop above a passing
  // multiple of 32 (e.g. at 97); the tile edges below it find 65.
  runners_.add("tail_bug", [](const proc::RunRequest& r) {
    const auto n = testing::input(r, "x").shape.back();
    auto out = testing::cumsum_ok(r);
    if (n > 64 && n % 32 != 0) {
      auto values = out.outputs["out"].to_doubles();
      values.back() += 1;
      out.outputs["out"] =
          tensor::Tensor::from_doubles(tensor::DType::float32, out.outputs["out"].shape, values);
    }
    return out;
  });
  const auto config =
      testing::fake_config(testing::cumsum_op("tail", "tail_bug", "M = [1, 4], N = [1, 4095]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  for (std::int64_t n : {100, 255, 4095}) {
    MinimizeOptions options;
    options.strategy = MinimizeStrategy::dims;
    options.max_iters = 150;
    const auto result = minimize(session, make_case(op, {{"M", 2}, {"N", n}}, 9), options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->minimized_case.dims.at("N"), 65) << "from N = " << n;
    EXPECT_FALSE(result->out_of_budget_in.has_value());
  }
}

TEST_F(MinimizeTest, RunningOutOfBudgetIsReportedWithTheBestSoFar) {
  const auto config =
      testing::fake_config(testing::cumsum_op("cumsum", "cumsum_no_carry", "M = [1, 4], N = [1, 4095]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  const auto original = make_case(op, {{"M", 3}, {"N", 4095}}, 5);
  MinimizeOptions options;
  options.max_iters = 6;
  const auto result = minimize(session, original, options);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->out_of_budget_in.has_value());
  EXPECT_EQ(*result->out_of_budget_in, MinimizePhase::dims);
  EXPECT_EQ(result->attempts, 6);
  EXPECT_EQ(runners_.calls(), 2 * 6);  // op and reference per run
  EXPECT_EQ(result->minimized.verdict.kind, check::FailureKind::mismatch);
  EXPECT_TRUE(no_larger(result->minimized_case, original));
  EXPECT_LT(result->minimized_case.dims.at("N") * result->minimized_case.dims.at("M"), 3 * 4095);

  // With budget for the dims but not the values, it stops in the values phase.
  options.max_iters = 40;
  const auto values = minimize(session, original, options);
  ASSERT_TRUE(values);
  ASSERT_TRUE(values->out_of_budget_in.has_value());
  EXPECT_EQ(*values->out_of_budget_in, MinimizePhase::values);
  EXPECT_EQ(values->minimized_case.dims.at("N"), 33);
}

TEST_F(MinimizeTest, LinkedDimsShrinkTogether) {
  // a[M, K] @ b[K, N] where only the last K block counts (the examples' matmul_acc_bug).
  auto matmul = [](const proc::RunRequest& r, bool last_block_only) {
    const auto& a = testing::input(r, "a");
    const auto& b = testing::input(r, "b");
    const auto m = a.shape[0], k = a.shape[1], n = b.shape[1];
    const auto av = a.to_doubles(), bv = b.to_doubles();
    std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
    const std::int64_t first = last_block_only ? ((k - 1) / 32) * 32 : 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t p = first; p < k; ++p) c[i * n + j] += av[i * k + p] * bv[p * n + j];
    return testing::answer(
        tensor::Tensor::from_doubles(last_block_only ? a.dtype : tensor::DType::float64, {m, n}, c));
  };
  runners_.add("mm_ref", [&](const proc::RunRequest& r) { return matmul(r, false); });
  runners_.add("mm_bug", [&](const proc::RunRequest& r) { return matmul(r, true); });
  const auto config = testing::fake_config(
      "[[ops]]\nname = \"mm\"\nop_script = \"fake:mm_bug\"\nreference = \"fake:mm_ref\"\nlayouts = "
      "[\"transposed\"]\n"
      "[ops.schema]\ndims = { M = [1, 100], N = [1, 100], K = [1, 256] }\ninputs = { a = [\"M\", \"K\"], b = "
      "[\"K\", \"N\"] }\n");
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  auto original = make_case(op, {{"M", 70}, {"N", 45}, {"K", 200}}, 3);
  original.params.layout = tensor::Layout::transposed;
  for (auto& [name, t] : original.inputs) t = tensor::with_layout(t, tensor::Layout::transposed);
  MinimizeOptions options;
  options.max_iters = 150;
  const auto result = minimize(session, original, options);
  ASSERT_TRUE(result) << result.error().message;
  const auto& c = result->minimized_case;
  EXPECT_EQ(c.inputs.at("a").shape, (tensor::Shape{1, 33}));
  EXPECT_EQ(c.inputs.at("b").shape, (tensor::Shape{33, 1}));
  EXPECT_EQ(c.dims, (std::map<std::string, std::int64_t>{{"K", 33}, {"M", 1}, {"N", 1}}));
  // The candidates kept the case's real memory layout.
  EXPECT_NE(c.inputs.at("b").strides, tensor::contiguous_strides(c.inputs.at("b").shape));
}

TEST_F(MinimizeTest, InputsThatDisagreeWithTheSchemaAreNotSliced) {
  // A snapshot stored under another config: its x is [2, 50] while the case says N = 300. Slicing
  // to the case's dims used to read past the tensor.
  const auto config =
      testing::fake_config(testing::cumsum_op("cumsum", "cumsum_no_carry", "M = [1, 16], N = [1, 825]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  auto original = make_case(op, {{"M", 2}, {"N", 50}}, 4);
  original.dims = {{"M", 9}, {"N", 300}};
  MinimizeOptions options;
  options.max_iters = 80;
  const auto result = minimize(session, original, options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->minimized.verdict.kind, check::FailureKind::mismatch);
  // The tensors themselves are the truth: N shrinks from 50, M from 2.
  EXPECT_EQ(result->minimized_case.inputs.at("x").shape, (tensor::Shape{1, 33}));

  // A client's inputs with no dims at all shrink the same way.
  auto client = make_case(op, {{"M", 2}, {"N", 50}}, 4);
  client.dims.clear();
  const auto from_client = minimize(session, client, options);
  ASSERT_TRUE(from_client) << from_client.error().message;
  EXPECT_EQ(from_client->minimized_case.inputs.at("x").shape, (tensor::Shape{1, 33}));
  EXPECT_EQ(from_client->minimized_case.dims, (std::map<std::string, std::int64_t>{{"M", 1}, {"N", 33}}));
  EXPECT_EQ(from_client->minimized.dims, from_client->minimized_case.dims);
}

TEST_F(MinimizeTest, APassingCaseIsAUsageError) {
  const auto config =
      testing::fake_config(testing::cumsum_op("cumsum", "cumsum_ok", "M = [1, 4], N = [1, 64]"));
  const auto& op = config.ops.front();
  OpSession session(config, op, runners_.factory());
  const auto result = minimize(session, make_case(op, {{"M", 2}, {"N", 64}}, 1), {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::usage);
  EXPECT_NE(result.error().message.find("passes now"), std::string::npos);
}

TEST(MinimizeStrategyNames, EveryStrategyHasTheNameTheCliAndDaemonTake) {
  EXPECT_EQ(parse_minimize_strategy("dims"), MinimizeStrategy::dims);
  EXPECT_EQ(parse_minimize_strategy("values"), MinimizeStrategy::values);
  EXPECT_EQ(parse_minimize_strategy("all"), MinimizeStrategy::all);
  EXPECT_EQ(parse_minimize_strategy("Dims"), std::nullopt);
  EXPECT_EQ(parse_minimize_strategy(""), std::nullopt);
}

TEST(SubBlock, RefusesABlockOutsideTheTensor) {
  const auto t = tensor::Tensor::zeros(tensor::DType::float32, {2, 5});
  EXPECT_EQ(sub_block(t, {0, 3}, {2, 2}).shape, (tensor::Shape{2, 2}));
  EXPECT_THROW(sub_block(t, {0, 4}, {2, 2}), std::out_of_range);
  EXPECT_THROW(sub_block(t, {0, -1}, {2, 2}), std::out_of_range);
  EXPECT_THROW(sub_block(t, {0}, {2}), std::out_of_range);
}

}  // namespace
}  // namespace gpuemu::engine
