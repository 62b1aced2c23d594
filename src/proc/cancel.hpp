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
// True once the current token (or the scope's second one) was set: stop waiting, kill what runs,
// report nothing.
bool cancel_requested();
// Whether anything can cancel this thread's work: waits then poll every kCancelPollMs.
bool cancel_possible();

// Makes `token` the current one for this thread until the scope ends (job threads of a run
// install their caller's token this way). `also`: a second token that cancels this thread's work
// too, without being passed on (a session's own, for a case it may abandon: OpSession).
class CancelScope {
 public:
  explicit CancelScope(CancelToken token, CancelToken also = {});
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  CancelToken previous_;
  CancelToken previous_also_;
};

}  // namespace gpuemu::proc
