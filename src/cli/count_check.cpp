// Counts on the command line (see count_check.hpp): one message for every count option, naming the
// value, the range and the fix.
#include "cli/count_check.hpp"

#include <charconv>
#include <string>

#include <fmt/format.h>

namespace gpuemu::cli {

CLI::Validator count_in_range(std::int64_t low, std::int64_t high) {
  auto check = [low, high](const std::string& text) -> std::string {
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
      return fmt::format("'{}' is not a whole number: give a count from {} to {}", text, low, high);
    }
    if (ec == std::errc::result_out_of_range || value < low || value > high) {
      return fmt::format("{} is out of range: give a count from {} to {}", text, low, high);
    }
    return {};
  };
  return CLI::Validator(check, fmt::format("INT in [{} - {}]", low, high));
}

}  // namespace gpuemu::cli
