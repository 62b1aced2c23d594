// The current thread's cancel token (cancel.hpp).
#include "proc/cancel.hpp"

#include <utility>

namespace gpuemu::proc {
namespace {

thread_local CancelToken current;

}  // namespace

const CancelToken& current_cancel() {
  return current;
}

bool cancel_requested() {
  return current && current->load(std::memory_order_relaxed);
}

CancelScope::CancelScope(CancelToken token) : previous_(std::exchange(current, std::move(token))) {}

CancelScope::~CancelScope() {
  current = std::move(previous_);
}

}  // namespace gpuemu::proc
