// "Did you mean ...?" for unknown names: the closest candidate by edit distance, if close enough.
// Used by the CLI (commands, ops) and the config loader (keys, dtypes, invariants).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuemu::util {

std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `name` when its distance is at most max(2, name.size() / 3).
std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace gpuemu::util
