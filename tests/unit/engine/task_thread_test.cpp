// Tests for TaskThread (engine/task_thread.hpp): jobs run in order on one kept thread, what they
// throw reaches their future, and the jobs still queued run before the destructor returns.
#include "engine/task_thread.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpuemu::engine {
namespace {

TEST(TaskThread, JobsRunInOrderOnOneThreadThatIsNotTheCallers) {
  TaskThread jobs;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::vector<std::future<int>> results;
  for (int i = 0; i < 20; ++i) {
    results.push_back(jobs.submit([&, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
      return i * i;
    }));
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(results[i].get(), i * i);
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
  for (const auto& id : threads) EXPECT_EQ(id, threads.front());
  EXPECT_NE(threads.front(), std::this_thread::get_id());
}

TEST(TaskThread, WhatAJobThrowsReachesItsFutureAndTheThreadGoesOn) {
  TaskThread jobs;
  auto failed = jobs.submit([]() -> int { throw std::runtime_error("job failed"); });
  EXPECT_THROW(failed.get(), std::runtime_error);
  EXPECT_EQ(jobs.submit([] { return 7; }).get(), 7);
}

TEST(TaskThread, QueuedJobsRunBeforeTheDestructorReturns) {
  int ran = 0;
  std::future<void> last;
  {
    TaskThread jobs;
    for (int i = 0; i < 5; ++i) {
      last = jobs.submit([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran, 5);
  EXPECT_EQ(last.wait_for(std::chrono::seconds(0)), std::future_status::ready);
}

TEST(TaskThread, WaitOnExitWaitsForTheJobAlsoWhenTheScopeThrows) {
  TaskThread jobs;
  bool done = false;
  try {
    std::future<void> job = jobs.submit([&done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = true;
    });
    const WaitOnExit wait(job);
    throw std::runtime_error("the scope fails");
  } catch (const std::runtime_error&) {
    EXPECT_TRUE(done) << "the job was still running when its scope was left";
  }
}

}  // namespace
}  // namespace gpuemu::engine
