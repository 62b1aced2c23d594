// OpSession against fake runners: the op and the reference run at the same time (or one after the
// other with GPUEMU_PARALLEL_REFERENCE=0), their overlap is counted once in the timing, a case made
// ahead is the case its seed names (also after a wrong guess), and an exception on the op's thread
// reaches the caller.
#include "engine/op_session.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "engine_test_support.hpp"

namespace gpuemu::engine {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Both fakes check in, then wait (up to `patience`) until the other one has checked in too.
class Meeting {
 public:
  // True when the other side was inside at the same time.
  bool arrive(milliseconds patience) {
    std::unique_lock lock(mutex_);
    ++inside_;
    cv_.notify_all();
    const bool met = cv_.wait_for(lock, patience, [&] { return inside_ >= 2; });
    return met;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int inside_ = 0;
};

class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~EnvVar() { ::unsetenv(name_); }

 private:
  const char* name_;
};

class OpSessionTest : public ::testing::Test {
 protected:
  config::Config config_ = testing::fake_config(testing::cumsum_op("scan", "op", "M = [1, 4], N = [1, 64]"));
  const config::OpConfig& op() const { return config_.ops.front(); }
  testing::FakeRunners runners_;
};

// Runs one case whose op and reference each wait (up to `patience`) inside their call for the
// other to be inside its call too; how many of the two found the other there.
int calls_that_met(testing::FakeRunners& runners, const config::Config& config, milliseconds patience,
                   result::CaseRecord& record) {
  Meeting meeting;
  std::atomic<int> met{0};
  auto meet = [&](proc::RunOutcome outcome) {
    if (meeting.arrive(patience)) ++met;
    return outcome;
  };
  runners.add("cumsum_reference",
              [&](const proc::RunRequest& r) { return meet(testing::cumsum_reference(r)); });
  runners.add("op", [&](const proc::RunRequest& r) { return meet(testing::cumsum_ok(r)); });
  OpSession session(config, config.ops.front(), runners.factory());
  auto ran = session.run_seed(11);
  EXPECT_TRUE(ran) << ran.error().message;
  if (ran) record = std::move(*ran);
  return met.load();
}

TEST_F(OpSessionTest, TheOpAndTheReferenceRunAtTheSameTime) {
  result::CaseRecord record;
  EXPECT_EQ(calls_that_met(runners_, config_, milliseconds(10'000), record), 2)
      << "each waited for the other inside its call";
  EXPECT_TRUE(record.verdict.passed()) << record.verdict.message;
}

TEST_F(OpSessionTest, OneAfterTheOtherWhenTurnedOff) {
  const EnvVar off("GPUEMU_PARALLEL_REFERENCE", "0");
  result::CaseRecord record;
  // The reference waited alone and gave up; the op came after it and found it had been there.
  EXPECT_EQ(calls_that_met(runners_, config_, milliseconds(200), record), 1);
  EXPECT_TRUE(record.verdict.passed());
  EXPECT_DOUBLE_EQ(record.timing.overlap_secs, 0.0);
}

// Fakes that say when they ran: the op 0-100 ms, the reference 50-200 ms after a fixed moment.
TEST_F(OpSessionTest, TheOverlapIsCountedOnce) {
  const auto t0 = Clock::now();
  auto ran = [&](proc::RunOutcome outcome, int from_ms, int to_ms) {
    outcome.inside = milliseconds(to_ms - from_ms);
    outcome.spans = {util::span_from(t0 + milliseconds(from_ms), outcome.inside)};
    return outcome;
  };
  runners_.add("cumsum_reference",
               [&](const proc::RunRequest& r) { return ran(testing::cumsum_reference(r), 50, 200); });
  runners_.add("op", [&](const proc::RunRequest& r) { return ran(testing::cumsum_ok(r), 0, 100); });
  OpSession session(config_, op(), runners_.factory());
  auto record = session.run_seed(11);
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_NEAR(record->timing.op_secs, 0.100, 1e-9);
  EXPECT_NEAR(record->timing.reference_secs, 0.150, 1e-9);
  EXPECT_NEAR(record->timing.overlap_secs, 0.050, 1e-9);
  // The wall here is far below the fakes' claims: what is left for gpuemu is never negative.
  EXPECT_GE(record->timing.gpuemu_secs(), 0.0);

  // Apart, nothing overlaps; one inside the other, the shorter one is the overlap.
  testing::FakeRunners apart;
  apart.add("cumsum_reference",
            [&](const proc::RunRequest& r) { return ran(testing::cumsum_reference(r), 100, 150); });
  apart.add("op", [&](const proc::RunRequest& r) { return ran(testing::cumsum_ok(r), 0, 100); });
  OpSession apart_session(config_, op(), apart.factory());
  EXPECT_DOUBLE_EQ(apart_session.run_seed(11)->timing.overlap_secs, 0.0);
  testing::FakeRunners nested;
  nested.add("cumsum_reference",
             [&](const proc::RunRequest& r) { return ran(testing::cumsum_reference(r), 10, 30); });
  nested.add("op", [&](const proc::RunRequest& r) { return ran(testing::cumsum_ok(r), 0, 100); });
  OpSession nested_session(config_, op(), nested.factory());
  EXPECT_NEAR(nested_session.run_seed(11)->timing.overlap_secs, 0.020, 1e-9);
}

// What the op saw for `seeds` run in order on one session, each with the next as its guess
// (`guesses` overrides a guess).
std::vector<std::size_t> inputs_seen(const config::Config& config, const std::vector<std::uint64_t>& seeds,
                                     const std::map<std::size_t, std::uint64_t>& guesses = {}) {
  testing::FakeRunners runners;
  runners.add("cumsum_reference", testing::cumsum_reference);
  runners.add("op", testing::cumsum_no_carry);
  OpSession session(config, config.ops.front(), runners.factory());
  std::vector<std::string> verdicts;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    std::optional<std::uint64_t> next;
    if (i + 1 < seeds.size()) next = seeds[i + 1];
    if (auto it = guesses.find(i); it != guesses.end()) next = it->second;
    auto record = session.run_seed(seeds[i], next);
    EXPECT_TRUE(record) << record.error().message;
    EXPECT_EQ(record->seed, seeds[i]);
  }
  return runners.first_input_hashes();
}

TEST_F(OpSessionTest, ACaseMadeAheadIsTheCaseOfItsSeed) {
  const std::vector<std::uint64_t> seeds = {3, 4, 5, 6, 7, 8};
  // Each case alone, on a session of its own: nothing made ahead.
  std::vector<std::size_t> alone;
  for (auto seed : seeds) {
    const auto seen = inputs_seen(config_, {seed});
    alone.insert(alone.end(), seen.begin(), seen.end());
  }
  auto sorted = [](std::vector<std::size_t> v) {
    std::ranges::sort(v);
    return v;
  };
  EXPECT_EQ(sorted(inputs_seen(config_, seeds)), sorted(alone));
  // Wrong guesses (another seed, the same seed again) are thrown away, never run in its place.
  EXPECT_EQ(sorted(inputs_seen(config_, seeds, {{0, 99}, {2, 5}, {4, 1}})), sorted(alone));
}

TEST_F(OpSessionTest, OnlyCasesUpToTheLimitHaveTheNextOneMadeAhead) {
  runners_.add("cumsum_reference", testing::cumsum_reference);
  runners_.add("op", testing::cumsum_ok);
  OpSession session(config_, op(), runners_.factory());
  ASSERT_TRUE(session.run_seed(3, 4));
  EXPECT_TRUE(session.making_ahead());
  ASSERT_TRUE(session.run_seed(4));
  EXPECT_FALSE(session.making_ahead()) << "taken, and nothing asked for next";
  // Every case of this op has at least one input byte: a limit of 0 makes none ahead.
  session.set_most_bytes_made_ahead(0);
  ASSERT_TRUE(session.run_seed(5, 6));
  EXPECT_FALSE(session.making_ahead());
  auto record = session.run_seed(6);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->seed, 6u);
}

TEST_F(OpSessionTest, AnExceptionOnTheOpsThreadReachesTheCaller) {
  runners_.add("cumsum_reference", testing::cumsum_reference);
  runners_.add(
      "op", [](const proc::RunRequest&) -> proc::RunOutcome { throw std::runtime_error("op runner broke"); });
  OpSession session(config_, op(), runners_.factory());
  EXPECT_THROW((void)session.run_seed(11), std::runtime_error);
  // The session is still usable: the next case runs (and throws the same way).
  EXPECT_THROW((void)session.run_seed(12, 13), std::runtime_error);
}

}  // namespace
}  // namespace gpuemu::engine
