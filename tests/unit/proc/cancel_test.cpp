// Tests for cancelling work (proc/cancel.hpp): a set token ends a wait on a child that would run
// for minutes within a fraction of a second, and tokens stay with the thread that installed them.
#include "proc/cancel.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "proc/process.hpp"

namespace gpuemu::proc {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(Cancel, ASetTokenEndsAWaitOnAChildAndKillsIt) {
  auto token = std::make_shared<std::atomic<bool>>(false);
  const CancelScope scope(token);
  ProcessSpec spec;
  spec.argv = {"sleep", "300"};
  spec.timeout = 300s;
  std::jthread canceller([token] {
    std::this_thread::sleep_for(300ms);
    *token = true;
  });
  const auto started = Clock::now();
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(Clock::now() - started, 3s);
}

TEST(Cancel, WithoutATokenNothingIsCancelled) {
  EXPECT_FALSE(cancel_requested());
  ProcessSpec spec;
  spec.argv = {"true"};
  auto r = run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
}

TEST(Cancel, ScopesNestAndBelongToTheirThread) {
  auto outer = std::make_shared<std::atomic<bool>>(true);
  {
    const CancelScope a(outer);
    EXPECT_TRUE(cancel_requested());
    std::thread([] { EXPECT_FALSE(cancel_requested()); }).join();  // another thread: its own token
    {
      const CancelScope b(std::make_shared<std::atomic<bool>>(false));
      EXPECT_FALSE(cancel_requested());
    }
    EXPECT_TRUE(cancel_requested());
  }
  EXPECT_FALSE(cancel_requested());
}

}  // namespace
}  // namespace gpuemu::proc
