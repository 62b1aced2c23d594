// "Did you mean ...?" for unknown names in gpuemu.toml: the closest candidate by edit distance
// (optimal string alignment, so one swapped pair of letters counts as one edit).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuemu::config {

// Edits (insert, delete, substitute, swap adjacent) turning `a` into `b`, ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a third of the word's length (at least one edit), or nothing.
// Ties go to the earlier candidate, so callers list the most common names first.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates);

// "hint: did you mean 'x'?" text without the "hint: " prefix, or "" when nothing is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

// "'a', 'b' or 'c'", for hints that list every allowed value.
std::string quoted_list(std::span<const std::string_view> names);

}  // namespace gpuemu::config
