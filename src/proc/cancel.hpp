// Cancelling a request's work (docs/protocol.md "Limits"): the daemon sets a token when the
// request's client disconnects or the daemon stops; waits on scripts and workers poll it, so
// cancelled work ends within about kCancelPollMs whatever the script does.
#pragma once

#include <atomic>
#include <memory>

namespace gpuemu::proc {

using CancelToken = std::shared_ptr<std::atomic<bool>>;

// How often a wait on a child process looks at the token.
inline constexpr int kCancelPollMs = 100;

// The token of the work this thread does; null when nothing can cancel it (the CLI).
const CancelToken& current_cancel();
// True once the current token was set: stop waiting, kill what runs, report nothing.
bool cancel_requested();

// Makes `token` the current one for this thread until the scope ends (job threads of a run
// install their caller's token this way).
class CancelScope {
 public:
  explicit CancelScope(CancelToken token);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  CancelToken previous_;
};

}  // namespace gpuemu::proc
