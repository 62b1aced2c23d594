// Unions of steady-clock spans (time_spans.hpp).
#include "util/time_spans.hpp"

#include <algorithm>

namespace gpuemu::util {

using Clock = std::chrono::steady_clock;

TimeSpan span_from(Clock::time_point from, std::chrono::nanoseconds length) {
  const auto positive = std::max(length, std::chrono::nanoseconds(0));
  return {from, from + std::chrono::duration_cast<Clock::duration>(positive)};
}

// libstdc++ and libc++ read CLOCK_MONOTONIC for steady_clock on Linux, counting from its zero.
Clock::time_point monotonic_time(std::uint64_t ns) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

std::chrono::nanoseconds covered(std::vector<TimeSpan> spans) {
  std::ranges::sort(spans, {}, &TimeSpan::from);
  std::chrono::nanoseconds total{0};
  bool open = false;
  TimeSpan current{};
  for (const TimeSpan& s : spans) {
    if (open && s.from <= current.to) {
      current.to = std::max(current.to, s.to);
      continue;
    }
    if (open) total += current.to - current.from;
    current = s;
    open = true;
  }
  if (open) total += current.to - current.from;
  return total;
}

}  // namespace gpuemu::util
