// util/time: the one ISO 8601 form (milliseconds, UTC) that history, the daemon's replies and its
// log print, and the clock it formats.
#include "util/time.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace gpuemu::util {
namespace {

TEST(IsoTime, PrintsUtcWithMilliseconds) {
  EXPECT_EQ(iso_time(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso_time(1'795'000'000'007), "2026-11-18T11:06:40.007Z");
  EXPECT_EQ(iso_time(951'782'400'999), "2000-02-29T00:00:00.999Z");  // a leap day
  EXPECT_EQ(iso_time(-1), "1969-12-31T23:59:59.999Z");               // floor, not truncation
}

TEST(IsoTime, NowIsAfterThisCodeWasWrittenAndPrintsInTheSameForm) {
  const Millis now = now_millis();
  EXPECT_GT(now, 1'795'000'000'000);
  EXPECT_TRUE(std::regex_match(iso_time(now), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
}

}  // namespace
}  // namespace gpuemu::util
