// The current thread's cancel token (cancel.hpp).
#include "proc/cancel.hpp"

#include <utility>

namespace gpuemu::proc {
namespace {

thread_local CancelToken current;
thread_local CancelToken also_current;

bool is_set(const CancelToken& token) {
  return token && token->load(std::memory_order_relaxed);
}

}  // namespace

const CancelToken& current_cancel() {
  return current;
}

bool cancel_requested() {
  return is_set(current) || is_set(also_current);
}

bool cancel_possible() {
  return current || also_current;
}

CancelScope::CancelScope(CancelToken token, CancelToken also)
    : previous_(std::exchange(current, std::move(token))),
      previous_also_(std::exchange(also_current, std::move(also))) {}

CancelScope::~CancelScope() {
  current = std::move(previous_);
  also_current = std::move(previous_also_);
}

}  // namespace gpuemu::proc
