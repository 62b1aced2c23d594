// Helpers shared by the daemon's unit tests: the shared protocol vectors and byte conversions.
#pragma once

#include <fstream>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuemu::daemon::testing {

inline nlohmann::json load_vectors() {
  std::ifstream in(std::string(GPUEMU_SOURCE_DIR) + "/tests/vectors/protocol/messages.json");
  return nlohmann::json::parse(in);
}

inline std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

inline std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

}  // namespace gpuemu::daemon::testing
