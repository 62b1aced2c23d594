// SHA-256 through OpenSSL, as lowercase hex: config digests, report subjects, input snapshots.
// File hashing streams so large artifacts need no extra memory.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gpuemu::util {

std::string sha256_hex(std::string_view data);
std::string sha256_hex(std::span<const std::byte> data);
Expected<std::string> sha256_file_hex(const std::filesystem::path& path);

}  // namespace gpuemu::util
