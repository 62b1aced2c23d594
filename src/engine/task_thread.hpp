// One thread kept for a session's background jobs (the op's call, the next case made ahead), run in
// the order given: starting a thread per case cost two thread starts and stack releases a case.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

namespace gpuemu::engine {

class TaskThread {
 public:
  TaskThread() = default;
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;
  // Runs the jobs still queued, then joins.
  ~TaskThread();

  // Queues `job` (the thread starts with the first one); its result, or what it threw, comes
  // through the future.
  template <class Job>
  std::future<std::invoke_result_t<Job>> submit(Job job) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<Job>()>>(std::move(job));
    auto result = task->get_future();
    post([task] { (*task)(); });
    return result;
  }

 private:
  void post(std::function<void()> job);
  void serve();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

// Waits for a job's future when leaving a scope, also by an exception, so that a job which uses the
// scope's locals never outlives them.
class WaitOnExit {
 public:
  explicit WaitOnExit(const std::future<void>& done) : done_(done) {}
  WaitOnExit(const WaitOnExit&) = delete;
  WaitOnExit& operator=(const WaitOnExit&) = delete;
  ~WaitOnExit() {
    if (done_.valid()) done_.wait();
  }

 private:
  const std::future<void>& done_;
};

}  // namespace gpuemu::engine
