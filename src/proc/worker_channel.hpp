// One live worker process and its frame stream: writes a request frame and reads a reply frame
// in one poll loop that also drains the worker's stderr, bounded by a deadline and a size cap.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "proc/spawn.hpp"
#include "proc/tail_buffer.hpp"
#include "wire/frames.hpp"

namespace gpuemu::proc {

// Owns a worker child (its own process group); the destructor kills the group and reaps it.
class WorkerChannel {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Status {
    ok,
    timed_out,  // the deadline passed first
    exited,     // the worker closed stdout or exited before a whole frame arrived
    overflow,   // the reply is larger than the cap
    bad_frame,  // wrong magic, version or an unparsable header (error() says which)
  };

  static Expected<std::unique_ptr<WorkerChannel>> start(const SpawnSpec& spec, std::size_t stderr_tail,
                                                        std::string what);
  ~WorkerChannel();
  WorkerChannel(const WorkerChannel&) = delete;
  WorkerChannel& operator=(const WorkerChannel&) = delete;

  // Sends `request` (null: only read) and reads one reply frame into `reply`.
  Status exchange(const wire::OutgoingFrame* request, wire::IncomingFrame& reply, Clock::time_point deadline,
                  std::size_t max_reply_bytes);

  // Kills the group (if still running), reaps, and reports how the worker ended. Idempotent.
  ExitStatus stop();

  // Asks a worker that ran out of time where the user's code is (SIGUSR1; the worker answers one
  // stderr line, docs/worker-protocol.md "Timeouts") and waits up to `grace` for it: "file:line in
  // function", or empty when it did not say (busy in C code, or not a gpuemu worker). Call before stop().
  std::string where_stopped(std::chrono::milliseconds grace);

  TailBuffer& stderr_tail() { return stderr_; }
  const std::string& error() const { return error_; }
  pid_t pid() const { return child_.pid; }

 private:
  WorkerChannel(SpawnedChild child, std::size_t stderr_tail, std::string what);
  void drain_stderr();

  SpawnedChild child_;
  TailBuffer stderr_;
  std::string what_;
  std::string error_;
  bool stopped_ = false;
  ExitStatus exit_;
};

}  // namespace gpuemu::proc
