// engine::execute against fake runners: the result (records, order, summaries) is the same for
// every --jobs; --fail-fast keeps the cases up to the first failure in plan order whatever
// finished first; the sink sees every case; a runner that cannot start is a fatal error.
#include "engine/executor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/plans.hpp"
#include "engine_test_support.hpp"

namespace gpuemu::engine {
namespace {

// Two ops over x[M, N]: a correct cumsum and one that drops its block carry; float32 and float16.
config::Config two_ops() {
  return testing::fake_config(testing::cumsum_op("good", "cumsum_ok", "M = [1, 6], N = [1, 100]") + "\n" +
                                  testing::cumsum_op("bad", "cumsum_no_carry", "M = [1, 6], N = [1, 100]"),
                              "[\"float32\", \"float16\"]");
}

// The result without its wall-clock duration.
nlohmann::json comparable(const result::RunResult& result) {
  auto doc = to_json(result);
  doc.erase("duration_secs");
  // Wall-clock timing differs from run to run; what the cases found must not.
  doc.erase("timing");
  for (auto& op : doc["ops"]) op.erase("timing");
  return doc;
}

class CountingSink : public ResultSink {
 public:
  Expected<void> on_case(const result::CaseRecord& record) override {
    seeds.push_back(record.seed);
    return {};
  }
  std::vector<std::uint64_t> seeds;
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runners_.add("cumsum_reference", testing::cumsum_reference);
    // Slow the op a little at random-ish sizes so job threads finish out of plan order.
    runners_.add("cumsum_ok", [](const proc::RunRequest& r) {
      if (testing::input(r, "x").shape.back() % 3 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return testing::cumsum_ok(r);
    });
    runners_.add("cumsum_no_carry", [](const proc::RunRequest& r) {
      if (testing::input(r, "x").shape.back() % 2 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return testing::cumsum_no_carry(r);
    });
  }
  testing::FakeRunners runners_;
};

TEST_F(ExecutorTest, TheResultDoesNotDependOnJobs) {
  const auto config = two_ops();
  auto plan = plan_fuzz(config, {}, 99, 40);
  ASSERT_TRUE(plan) << plan.error().message;
  plan->runners = runners_.factory();
  std::optional<nlohmann::json> first;
  for (int jobs : {1, 2, 4, 7}) {
    plan->jobs = jobs;
    CountingSink sink;
    const auto result = execute(config, *plan, &sink);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(sink.seeds.size(), 80u);
    EXPECT_FALSE(result->partial);
    ASSERT_EQ(result->ops.size(), 2u);
    EXPECT_EQ(result->ops[0].passed, 40) << "the correct cumsum must pass every case";
    EXPECT_GT(result->ops[1].failed, 0) << "the carry bug must be caught";
    if (!first) {
      first = comparable(*result);
    } else {
      EXPECT_EQ(comparable(*result), *first) << "jobs = " << jobs;
    }
  }
}

TEST_F(ExecutorTest, FailFastKeepsThePlanPrefixUpToTheFirstFailure) {
  const auto config = two_ops();
  auto plan = plan_fuzz(config, Selection{.ops = {"bad"}}, 5, 30);
  ASSERT_TRUE(plan) << plan.error().message;
  plan->runners = runners_.factory();
  plan->fail_fast = true;
  std::optional<nlohmann::json> first;
  for (int jobs : {1, 3}) {
    plan->jobs = jobs;
    const auto result = execute(config, *plan);
    ASSERT_TRUE(result) << result.error().message;
    const auto& op = result->ops.at(0);
    ASSERT_EQ(op.failures.size(), 1u);
    EXPECT_EQ(op.total, static_cast<int>(op.failures[0].index) + 1);
    EXPECT_TRUE(result->partial);
    if (!first) {
      first = comparable(*result);
    } else {
      EXPECT_EQ(comparable(*result), *first);
    }
  }
}

// With one job thread, the first op's runners are warmed up (their workers started) before the first
// case, and the next op's four cases before the op before it ends, once each; with several, any
// thread may take the next op: none is.
TEST_F(ExecutorTest, TheNextOpsRunnersStartFourCasesAhead) {
  const auto config = two_ops();
  auto plan = plan_fuzz(config, Selection{.ops = {"good", "bad"}, .dtype = tensor::DType::float32}, 3, 10);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->ops.size(), 2u);
  auto fakes = [](testing::FakeRunners& runners) {
    runners.add("cumsum_reference", testing::cumsum_reference);
    runners.add("cumsum_ok", testing::cumsum_ok);
    runners.add("cumsum_no_carry", testing::cumsum_no_carry);
    return runners.factory();
  };
  testing::FakeRunners one_job;
  plan->runners = fakes(one_job);
  ASSERT_TRUE(execute(config, *plan));
  // The first op's runners before any case (while the load check would run); the second op's once
  // cases 0-5 of "good" ran (two runs each), when case 6, the fourth from its end, is asked for. With
  // one job thread case 6 was started ahead while case 5 was judged (OpSession::Ahead::run), so 0, 1
  // or 2 of its runs may have happened by then: 12 to 14 runs, never fewer and never case 7's.
  const auto warm = one_job.warm_ups();
  ASSERT_EQ(warm.size(), 4u);
  EXPECT_EQ(warm[0], (std::pair<std::string, int>{"cumsum_ok", 0}));
  EXPECT_EQ(warm[1], (std::pair<std::string, int>{"cumsum_reference", 0}));
  EXPECT_EQ(warm[2].first, "cumsum_no_carry");
  EXPECT_EQ(warm[3].first, "cumsum_reference");
  for (const auto& [function, runs] : std::vector(warm.begin() + 2, warm.end())) {
    EXPECT_GE(runs, 12) << function;
    EXPECT_LE(runs, 14) << function;
  }
  testing::FakeRunners two_jobs;
  plan->runners = fakes(two_jobs);
  plan->jobs = 2;
  ASSERT_TRUE(execute(config, *plan));
  EXPECT_TRUE(two_jobs.warm_ups().empty());
}

TEST_F(ExecutorTest, AnOpThatCannotStartIsFatal) {
  testing::FakeRunners runners;
  runners.add("cumsum_reference", testing::cumsum_reference);
  runners.add("cumsum_ok", [](const proc::RunRequest&) {
    proc::RunOutcome outcome;
    outcome.failure = proc::RunFailure::start_failed;
    outcome.message = "python3: not found";
    return outcome;
  });
  const auto config = two_ops();
  auto plan = plan_fuzz(config, Selection{.ops = {"good"}}, 5, 10);
  ASSERT_TRUE(plan);
  plan->runners = runners.factory();
  plan->jobs = 2;
  const auto result = execute(config, *plan);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::environment);
  EXPECT_EQ(result.error().message, "python3: not found");
}

}  // namespace
}  // namespace gpuemu::engine
