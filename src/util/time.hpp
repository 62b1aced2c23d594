// Wall-clock time as gpuemu stores and prints it: milliseconds since the Unix epoch, and ISO 8601
// in UTC with milliseconds ("2026-11-25T03:55:56.123Z") wherever a time is shown.
#pragma once

#include <cstdint>
#include <string>

namespace gpuemu::util {

using Millis = std::int64_t;  // milliseconds since the Unix epoch (UTC)

// The system clock now. Code that tests must control takes a clock (store::Clock) instead.
Millis now_millis();

// "YYYY-MM-DDTHH:MM:SS.mmmZ": history, the daemon's replies and its log all print this one form.
std::string iso_time(Millis millis);

}  // namespace gpuemu::util
