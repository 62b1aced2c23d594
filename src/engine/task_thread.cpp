// TaskThread (task_thread.hpp): a queue of jobs and the one thread that runs them.
#include "engine/task_thread.hpp"

namespace gpuemu::engine {

TaskThread::~TaskThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void TaskThread::post(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { serve(); });
  }
  wake_.notify_one();
}

void TaskThread::serve() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();  // a packaged_task: what it throws goes to its future
  }
}

}  // namespace gpuemu::engine
