// Fast parsing of replies that carry megabytes of base64: long string literals are cut out of
// the JSON text (kept as views) before nlohmann parses the small remaining skeleton.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuemu::wire {

// The JSON text with every long escape-free string literal replaced by a placeholder string,
// plus the original contents of those strings (views into the input, which must outlive this).
struct JsonSkeleton {
  std::string text;
  std::vector<std::string_view> strings;

  // The original contents of a string value: its long-string view when `value` is a
  // placeholder, else the value itself. Nullopt when `value` is not a string.
  std::optional<std::string_view> string_value(const nlohmann::json& value) const;
};

// Cuts out string literals of at least `min_length` bytes that contain no escapes. Malformed
// JSON is passed through so that parsing the skeleton reports it.
JsonSkeleton make_json_skeleton(std::string_view json_text, std::size_t min_length = 1024);

}  // namespace gpuemu::wire
