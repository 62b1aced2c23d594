// The system clock and its one printed form (time.hpp).
#include "util/time.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace gpuemu::util {

Millis now_millis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso_time(Millis millis) {
  // Floor division, so a time before 1970 still has a millisecond part in 0..999.
  Millis secs = millis / 1000;
  Millis ms = millis % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  const auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

}  // namespace gpuemu::util
