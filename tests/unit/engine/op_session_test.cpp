// OpSession against fake runners: the op and the reference run at the same time (or one after the
// other with GPUEMU_PARALLEL_REFERENCE=0), their overlap is counted once in the timing, a case made
// ahead is the case its seed names (also after a wrong guess), time before a case began is not its
// own, and an exception on the op's thread reaches the caller.
#include "engine/op_session.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

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
  auto meet = [&](run::RunOutcome outcome) {
    if (meeting.arrive(patience)) ++met;
    return outcome;
  };
  runners.add("cumsum_reference",
              [&](const run::RunRequest& r) { return meet(testing::cumsum_reference(r)); });
  runners.add("op", [&](const run::RunRequest& r) { return meet(testing::cumsum_ok(r)); });
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

// Runs one case whose fakes say they ran in the given spans, in ms after the case began (each
// returns at the end of its span); `import_ms`, a span of the op's before the case began (a worker
// started ahead imports the user's code while an earlier case runs).
result::CaseRecord timed_case(const config::Config& config, std::pair<int, int> op_ms,
                              std::pair<int, int> ref_ms, int import_ms = 0) {
  Clock::time_point t0;
  auto ran = [&](run::RunOutcome outcome, std::pair<int, int> ms, int before_ms) {
    std::this_thread::sleep_until(t0 + milliseconds(ms.second));
    outcome.inside = milliseconds(ms.second - ms.first);
    outcome.spans = {util::span_from(t0 + milliseconds(ms.first), outcome.inside)};
    if (before_ms > 0) {
      outcome.spans.insert(outcome.spans.begin(),
                           util::span_from(t0 - milliseconds(before_ms + 5), milliseconds(before_ms)));
      outcome.inside += milliseconds(before_ms);
    }
    return outcome;
  };
  testing::FakeRunners runners;
  runners.add("cumsum_reference",
              [&](const run::RunRequest& r) { return ran(testing::cumsum_reference(r), ref_ms, 0); });
  runners.add("op", [&](const run::RunRequest& r) { return ran(testing::cumsum_ok(r), op_ms, import_ms); });
  OpSession session(config, config.ops.front(), runners.factory());
  t0 = Clock::now();
  auto record = session.run_seed(11);
  EXPECT_TRUE(record) << record.error().message;
  return record ? *record : result::CaseRecord{};
}

// The op 0-100 ms, the reference 50-200 ms: 50 ms of overlap, counted once.
TEST_F(OpSessionTest, TheOverlapIsCountedOnce) {
  constexpr double kSlack = 0.003;  // the case begins a little after the fakes' zero
  const auto record = timed_case(config_, {0, 100}, {50, 200});
  EXPECT_NEAR(record.timing.op_secs, 0.100, kSlack);
  EXPECT_NEAR(record.timing.reference_secs, 0.150, kSlack);
  EXPECT_NEAR(record.timing.overlap_secs, 0.050, kSlack);
  EXPECT_GE(record.timing.gpuemu_secs(), 0.0);
  EXPECT_NEAR(record.timing.wall_secs,
              record.timing.op_secs + record.timing.reference_secs - record.timing.overlap_secs +
                  record.timing.gpuemu_secs(),
              1e-9);
  // Apart, nothing overlaps; one inside the other, the shorter one is the overlap.
  EXPECT_DOUBLE_EQ(timed_case(config_, {0, 100}, {100, 150}).timing.overlap_secs, 0.0);
  EXPECT_NEAR(timed_case(config_, {0, 100}, {10, 30}).timing.overlap_secs, 0.020, kSlack);
}

// Time a worker spent before the case began (its import, while another op's case ran) is not the
// case's: the op counts its call only, and gpuemu's share stays what the case's wall leaves.
TEST_F(OpSessionTest, TimeBeforeTheCaseIsNotItsOwn) {
  const auto record = timed_case(config_, {0, 40}, {0, 20}, 300);
  EXPECT_NEAR(record.timing.op_secs, 0.040, 0.003);
  EXPECT_NEAR(record.timing.overlap_secs, 0.020, 0.003);
  EXPECT_LT(record.timing.wall_secs, 0.300);
  EXPECT_GE(record.timing.gpuemu_secs(), 0.0);
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
      "op", [](const run::RunRequest&) -> run::RunOutcome { throw std::runtime_error("op runner broke"); });
  OpSession session(config_, op(), runners_.factory());
  EXPECT_THROW((void)session.run_seed(11), std::runtime_error);
  // The session is still usable: the next case runs (and throws the same way).
  EXPECT_THROW((void)session.run_seed(12, 13), std::runtime_error);
}

}  // namespace
}  // namespace gpuemu::engine
