// Seed text parsing (seed.hpp): from_chars over the whole text, nothing before or after it.
#include "util/seed.hpp"

#include <charconv>

namespace gpuemu::util {

std::optional<std::uint64_t> parse_seed(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace gpuemu::util
