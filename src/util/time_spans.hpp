// Spans of steady-clock time (CLOCK_MONOTONIC, which the workers' time.monotonic_ns() reads too)
// and how long a set of them covers together: how much of a case the op and the reference overlapped.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace gpuemu::util {

struct TimeSpan {
  std::chrono::steady_clock::time_point from;
  std::chrono::steady_clock::time_point to;  // never before `from`
};

// The span of `length` that began at `from`.
TimeSpan span_from(std::chrono::steady_clock::time_point from, std::chrono::nanoseconds length);

// A steady_clock time point from a CLOCK_MONOTONIC reading in nanoseconds (a worker's "called_ns").
std::chrono::steady_clock::time_point monotonic_time(std::uint64_t ns);

// The time covered by at least one of `spans` (overlaps counted once).
std::chrono::nanoseconds covered(std::vector<TimeSpan> spans);

}  // namespace gpuemu::util
