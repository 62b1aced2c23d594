// Workflow-command formatting and escaping (see workflow_commands.hpp).
#include "github/workflow_commands.hpp"

#include <cstdio>
#include <random>

namespace gpuemu::github {

std::string escape_data(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_property(std::string_view text) {
  std::string out;
  for (char c : escape_data(text)) {
    switch (c) {
      case ':':
        out += "%3A";
        break;
      case ',':
        out += "%2C";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string workflow_command(std::string_view name, const Properties& properties, std::string_view message) {
  std::string out = "::" + std::string(name);
  bool first = true;
  for (const auto& [key, value] : properties) {
    if (value.empty()) continue;
    out += first ? " " : ",";
    out += key + "=" + escape_property(value);
    first = false;
  }
  return out + "::" + escape_data(message);
}

std::string random_token() {
  std::random_device device;  // /dev/urandom on Linux
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char buffer[9];
    std::snprintf(buffer, sizeof buffer, "%08x", static_cast<unsigned>(device()));
    out += buffer;
  }
  return out;
}

}  // namespace gpuemu::github
