// OpSession against fake runners: the op and the reference run at the same time (or one after the
// other with GPUEMU_PARALLEL_REFERENCE=0), their overlap is counted once, a case made ahead is the
// case its seed names (also after a wrong guess), an exception on the op's thread reaches the caller,
// and cases started ahead (Ahead::run) keep each worker's order and the verdicts.
#include "engine/op_session.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "proc/cancel.hpp"

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

// An outcome whose call ran from `from_ms` to `to_ms` after `t0` (its inside time and span).
struct RanAt {
  Clock::time_point t0;
  proc::RunOutcome operator()(proc::RunOutcome outcome, int from_ms, int to_ms) const {
    outcome.inside = milliseconds(to_ms - from_ms);
    outcome.spans = {util::span_from(t0 + milliseconds(from_ms), outcome.inside)};
    return outcome;
  }
};

// Fakes that say when they ran: the op 0-100 ms, the reference 50-200 ms after a fixed moment.
TEST_F(OpSessionTest, TheOverlapIsCountedOnce) {
  const RanAt ran{Clock::now()};
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

// What the op saw (its first input's hashes, sorted) and the records (seed and verdict) of `seeds`
// run in order on one session, each with the next two as its guess (`guesses` overrides a guess).
struct Seen {
  std::vector<std::size_t> inputs;
  std::vector<std::string> records;
};
Seen run_in_order(const config::Config& config, const std::vector<std::uint64_t>& seeds,
                  const std::map<std::size_t, std::vector<std::uint64_t>>& guesses = {},
                  OpSession::Ahead ahead = OpSession::Ahead::make) {
  testing::FakeRunners runners;
  runners.add("cumsum_reference", testing::cumsum_reference);
  runners.add("op", testing::cumsum_no_carry);
  Seen seen;
  {
    OpSession session(config, config.ops.front(), runners.factory());
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      std::vector<std::uint64_t> next;
      for (std::size_t k = i + 1; k < seeds.size() && k < i + 3; ++k) next.push_back(seeds[k]);
      if (auto it = guesses.find(i); it != guesses.end()) next = it->second;
      auto record = session.run_seed(seeds[i], next, ahead);
      EXPECT_TRUE(record) << record.error().message;
      if (!record) continue;
      EXPECT_EQ(record->seed, seeds[i]);
      seen.records.push_back(fmt::format(
          "{} {} {}", record->seed, check::failure_kind_name(record->verdict.kind), record->verdict.message));
    }
  }
  seen.inputs = runners.first_input_hashes();
  std::ranges::sort(seen.inputs);
  return seen;
}

TEST_F(OpSessionTest, ACaseMadeAheadIsTheCaseOfItsSeed) {
  const std::vector<std::uint64_t> seeds = {3, 4, 5, 6, 7, 8};
  // Each case alone, on a session of its own: nothing made ahead.
  Seen alone;
  for (auto seed : seeds) {
    const Seen one = run_in_order(config_, {seed});
    alone.inputs.insert(alone.inputs.end(), one.inputs.begin(), one.inputs.end());
    alone.records.insert(alone.records.end(), one.records.begin(), one.records.end());
  }
  std::ranges::sort(alone.inputs);
  // Wrong guesses: another seed with the right one after it; the right seed with a wrong one
  // after it (which the next call, guessing right, must not take for its own); the same seed again.
  const std::map<std::size_t, std::vector<std::uint64_t>> wrong = {
      {0, {99, 5}}, {1, {5, 99}}, {3, {6}}, {4, {1, 6}}};
  for (const auto ahead : {OpSession::Ahead::make, OpSession::Ahead::run}) {
    const Seen right = run_in_order(config_, seeds, {}, ahead);
    EXPECT_EQ(right.inputs, alone.inputs);
    EXPECT_EQ(right.records, alone.records);
    // A wrong guess is never run in the asked case's place. Made ahead, it is only thrown away;
    // started ahead, the op may already have run it (docs/worker-protocol.md, "Cases started ahead").
    const Seen guessed = run_in_order(config_, seeds, wrong, ahead);
    EXPECT_EQ(guessed.records, alone.records);
    if (ahead == OpSession::Ahead::make) {
      EXPECT_EQ(guessed.inputs, alone.inputs);
    } else {
      EXPECT_TRUE(std::ranges::includes(guessed.inputs, alone.inputs));
    }
  }
}

TEST_F(OpSessionTest, OnlyCasesUpToTheLimitHaveTheNextOneMadeAhead) {
  runners_.add("cumsum_reference", testing::cumsum_reference);
  runners_.add("op", testing::cumsum_ok);
  OpSession session(config_, op(), runners_.factory());
  ASSERT_TRUE(session.run_seed(3, {4}));
  EXPECT_TRUE(session.making_ahead());
  ASSERT_TRUE(session.run_seed(4));
  EXPECT_FALSE(session.making_ahead()) << "taken, and nothing asked for next";
  // Every case of this op has at least one input byte: a limit of 0 makes none ahead.
  session.set_most_bytes_made_ahead(0);
  ASSERT_TRUE(session.run_seed(5, {6}));
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
  EXPECT_THROW((void)session.run_seed(12, {13}), std::runtime_error);
}

// Ahead::run: the next case reaches the workers while this one is judged; each worker still sees
// the cases in the order asked, and the records are those of the cases run one by one.
TEST_F(OpSessionTest, CasesStartedAheadReachEachWorkerInOrderWithTheSameVerdicts) {
  const std::vector<std::uint64_t> seeds = {3, 4, 5, 6, 7, 8};
  auto run_all = [&](OpSession::Ahead ahead, std::vector<std::uint64_t>& op_saw) {
    std::mutex mutex;
    testing::FakeRunners runners;
    runners.add("cumsum_reference", testing::cumsum_reference);
    runners.add("op", [&](const proc::RunRequest& r) {
      {
        std::lock_guard lock(mutex);
        op_saw.push_back(r.seed.value_or(0));
      }
      // Every other case wrong: both verdicts appear.
      return r.seed.value_or(0) % 2 ? testing::cumsum_no_carry(r) : testing::cumsum_ok(r);
    });
    OpSession session(config_, op(), runners.factory());
    std::vector<std::string> verdicts;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      const std::vector<std::uint64_t> next(seeds.begin() + static_cast<long>(std::min(i + 1, seeds.size())),
                                            seeds.begin() + static_cast<long>(std::min(i + 3, seeds.size())));
      auto record = session.run_seed(seeds[i], next, ahead);
      EXPECT_TRUE(record) << record.error().message;
      if (!record) continue;
      EXPECT_EQ(record->seed, seeds[i]);
      verdicts.push_back(std::string(check::failure_kind_name(record->verdict.kind)) + " " +
                         record->verdict.message);
      if (ahead == OpSession::Ahead::run) {
        EXPECT_EQ(session.started_ahead(), !next.empty());
      }
    }
    return verdicts;
  };
  std::vector<std::uint64_t> made_saw, run_saw;
  const auto made = run_all(OpSession::Ahead::make, made_saw);
  const auto run = run_all(OpSession::Ahead::run, run_saw);
  EXPECT_EQ(run, made);
  EXPECT_EQ(run_saw, seeds);
  EXPECT_EQ(made_saw, seeds);
  const auto passed = std::ranges::count(made, std::string("none "));
  EXPECT_TRUE(passed > 0 && passed < static_cast<long>(made.size())) << "passing and failing cases";
}

TEST_F(OpSessionTest, TheNextCaseRunsWhileThisOneIsJudged) {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::uint64_t> op_called;
  runners_.add("cumsum_reference", testing::cumsum_reference);
  runners_.add("op", [&](const proc::RunRequest& r) {
    {
      std::lock_guard lock(mutex);
      op_called.push_back(r.seed.value_or(0));
    }
    cv.notify_all();
    return testing::cumsum_ok(r);
  });
  OpSession session(config_, op(), runners_.factory());
  ASSERT_TRUE(session.run_seed(3, {4}, OpSession::Ahead::run));
  // Nobody asked for case 4 yet, and its op is called anyway.
  std::unique_lock lock(mutex);
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return op_called.size() == 2; }));
  EXPECT_EQ(op_called, (std::vector<std::uint64_t>{3, 4}));
  lock.unlock();
  auto record = session.run_seed(4, {}, OpSession::Ahead::run);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->seed, 4u);
  EXPECT_TRUE(record->verdict.passed());
  EXPECT_FALSE(session.started_ahead());
  EXPECT_EQ(op_called.size(), 2u) << "case 4 ran once";
}

TEST_F(OpSessionTest, AWrongGuessIsThrownAwayAndTheAskedCaseRuns) {
  std::vector<std::uint64_t> op_saw;
  runners_.add("cumsum_reference", testing::cumsum_reference);
  runners_.add("op", [&](const proc::RunRequest& r) {
    op_saw.push_back(r.seed.value_or(0));  // one caller thread: the op's
    return testing::cumsum_ok(r);
  });
  OpSession session(config_, op(), runners_.factory());
  ASSERT_TRUE(session.run_seed(3, {99}, OpSession::Ahead::run));
  auto record = session.run_seed(4, {}, OpSession::Ahead::run);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->seed, 4u);
  EXPECT_EQ(op_saw.back(), 4u);
  // A replayed case (run_case) after a case started ahead waits for it: the runners serve one call at a time.
  ASSERT_TRUE(session.run_seed(5, {6}, OpSession::Ahead::run));
  auto c = fuzz::generate_case(op(), 7);
  ASSERT_TRUE(c);
  auto replayed = session.run_case(*c);
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->seed, 7u);
  EXPECT_FALSE(session.started_ahead());
}

// A case started ahead that nobody asks for (fail_fast, the time budget, an error ended the run) is
// cancelled when the session ends, not run to its end: a hanging op would hold the run until its timeout.
TEST_F(OpSessionTest, ACaseStartedAheadAndNeverAskedForIsCancelled) {
  std::atomic<bool> saw_cancel{false};
  runners_.add("cumsum_reference", testing::cumsum_reference);
  runners_.add("op", [&](const proc::RunRequest& r) {
    if (r.seed == 4u) {
      const auto give_up = Clock::now() + std::chrono::seconds(60);
      while (!proc::cancel_requested() && Clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      saw_cancel = proc::cancel_requested();
    }
    return testing::cumsum_ok(r);
  });
  const auto start = Clock::now();
  {
    OpSession session(config_, op(), runners_.factory());
    ASSERT_TRUE(session.run_seed(3, {4}, OpSession::Ahead::run));
    EXPECT_TRUE(session.started_ahead());
  }
  EXPECT_TRUE(saw_cancel);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
}

// A case started ahead may run while the case before runs its other call: that time is counted once.
TEST_F(OpSessionTest, TimeSharedWithTheCaseBeforeIsCountedOnce) {
  const RanAt ran{Clock::now()};
  // Case 3: op 0-10, reference 0-100; case 4: op 10-60 (inside case 3's reference), reference 100-150.
  runners_.add("cumsum_reference", [&](const proc::RunRequest& r) {
    return r.seed == 3u ? ran(testing::cumsum_reference(r), 0, 100)
                        : ran(testing::cumsum_reference(r), 100, 150);
  });
  runners_.add("op", [&](const proc::RunRequest& r) {
    return r.seed == 3u ? ran(testing::cumsum_ok(r), 0, 10) : ran(testing::cumsum_ok(r), 10, 60);
  });
  OpSession session(config_, op(), runners_.factory());
  auto first = session.run_seed(3, {4}, OpSession::Ahead::run);
  auto second = session.run_seed(4, {}, OpSession::Ahead::run);
  ASSERT_TRUE(first && second);
  EXPECT_NEAR(first->timing.overlap_secs, 0.010, 1e-9);
  // 100 ms of calls, of which only the reference's 50 ms were new: 50 ms ran beside another call.
  EXPECT_NEAR(second->timing.overlap_secs, 0.050, 1e-9);
  const double covered = first->timing.op_secs + first->timing.reference_secs - first->timing.overlap_secs +
                         second->timing.op_secs + second->timing.reference_secs - second->timing.overlap_secs;
  EXPECT_NEAR(covered, 0.150, 1e-9) << "the two cases' calls covered 0-150 ms";
}

}  // namespace
}  // namespace gpuemu::engine
