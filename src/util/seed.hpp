// Seeds as text: an unsigned 64-bit decimal number, the one form the CLI, the store's rows and
// the daemon's requests accept (a JSON number would lose precision above 2^53).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuemu::util {

// "0" to "18446744073709551615"; shown in every message that rejects a seed.
inline constexpr std::string_view kSeedRange = "0 to 18446744073709551615";

// The seed, or nothing for an empty text, a sign, a non-digit or a value above 2^64 - 1.
std::optional<std::uint64_t> parse_seed(std::string_view text);

}  // namespace gpuemu::util
