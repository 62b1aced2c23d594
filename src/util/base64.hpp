// Standard base64 (RFC 4648, with padding) for tensor data in the script protocol.
// Decoding rejects invalid characters and bad padding instead of guessing.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuemu::util {

std::string base64_encode(std::span<const std::byte> bytes);
std::optional<std::vector<std::byte>> base64_decode(std::string_view text);

}  // namespace gpuemu::util
