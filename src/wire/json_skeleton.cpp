// make_json_skeleton (json_skeleton.hpp). nlohmann's lexer copies strings a byte at a time
// (~20 MiB/s on a busy machine); memchr-driven scanning keeps a 64 MiB reply near base64 speed.
#include "wire/json_skeleton.hpp"

#include <charconv>
#include <cstring>

namespace gpuemu::wire {

namespace {

// A placeholder's text starts with \u0001, which no base64 payload or key name would use.
constexpr std::string_view kMarker = "\x01gpuemu-string-";
constexpr std::string_view kMarkerJson = "\\u0001gpuemu-string-";

}  // namespace

std::optional<std::string_view> JsonSkeleton::string_value(const nlohmann::json& value) const {
  if (!value.is_string()) return std::nullopt;
  std::string_view s = value.get_ref<const std::string&>();
  if (s.starts_with(kMarker)) {
    std::size_t index = 0;
    std::string_view digits = s.substr(kMarker.size());
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && index < strings.size())
      return strings[index];
  }
  return s;
}

JsonSkeleton make_json_skeleton(std::string_view text, std::size_t min_length) {
  JsonSkeleton skeleton;
  std::size_t copied = 0;  // text[0, copied) has been emitted into the skeleton
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t open = text.find('"', pos);
    if (open == std::string_view::npos) break;
    // Find the closing quote, stepping over escapes.
    std::size_t i = open + 1;
    bool escaped = false;
    std::size_t close = std::string_view::npos;
    while (i <= text.size()) {
      const std::size_t quote = text.find('"', i);
      if (quote == std::string_view::npos) break;
      const void* backslash = std::memchr(text.data() + i, '\\', quote - i);
      if (backslash == nullptr) {
        close = quote;
        break;
      }
      escaped = true;
      i = static_cast<std::size_t>(static_cast<const char*>(backslash) - text.data()) + 2;
    }
    if (close == std::string_view::npos) break;  // unterminated: let the parser report it
    if (!escaped && close - open - 1 >= min_length) {
      skeleton.text.append(text.substr(copied, open - copied));
      skeleton.text += '"';
      skeleton.text += kMarkerJson;
      skeleton.text += std::to_string(skeleton.strings.size());
      skeleton.text += '"';
      skeleton.strings.push_back(text.substr(open + 1, close - open - 1));
      copied = close + 1;
    }
    pos = close + 1;
  }
  skeleton.text.append(text.substr(copied));
  return skeleton;
}

}  // namespace gpuemu::wire
