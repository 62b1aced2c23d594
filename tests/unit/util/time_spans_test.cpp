// How long spans of the steady clock cover together: the measure of how much of a case the op and
// the reference ran at the same time (engine/op_session.cpp).
#include "util/time_spans.hpp"

#include <time.h>

#include <gtest/gtest.h>

namespace gpuemu::util {
namespace {

using std::chrono::nanoseconds;
const auto t0 = std::chrono::steady_clock::time_point(std::chrono::seconds(1000));

TimeSpan at(long from_ns, long length_ns) {
  return span_from(t0 + nanoseconds(from_ns), nanoseconds(length_ns));
}

TEST(TimeSpans, NothingCoversNothing) {
  EXPECT_EQ(covered({}), nanoseconds(0));
}

TEST(TimeSpans, DisjointSpansAdd) {
  EXPECT_EQ(covered({at(0, 10), at(20, 5)}), nanoseconds(15));
  EXPECT_EQ(covered({at(20, 5), at(0, 10)}), nanoseconds(15)) << "order does not matter";
}

TEST(TimeSpans, OverlapsCountOnce) {
  EXPECT_EQ(covered({at(0, 10), at(5, 10)}), nanoseconds(15));
  EXPECT_EQ(covered({at(0, 30), at(5, 10)}), nanoseconds(30)) << "one inside the other";
  EXPECT_EQ(covered({at(0, 10), at(10, 10)}), nanoseconds(20)) << "touching";
  EXPECT_EQ(covered({at(0, 10), at(5, 10), at(12, 10), at(40, 1)}), nanoseconds(23));
}

TEST(TimeSpans, NegativeLengthIsEmpty) {
  EXPECT_EQ(covered({at(0, -5)}), nanoseconds(0));
}

TEST(TimeSpans, MonotonicTimeIsTheSteadyClock) {
  // A worker's time.monotonic_ns() and our steady_clock must read the same clock, or overlaps
  // between the op and the reference would be measured wrong.
  timespec ts{};
  ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
  const auto before = std::chrono::steady_clock::now();
  const auto reading = monotonic_time(static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                                      static_cast<std::uint64_t>(ts.tv_nsec));
  const auto gap = before - reading;
  EXPECT_LT(std::chrono::abs(gap), std::chrono::milliseconds(50));
}

}  // namespace
}  // namespace gpuemu::util
