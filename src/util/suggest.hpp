// "Did you mean ...?" for unknown names: the closest candidate by edit distance, if close enough.
// The one suggester of gpuemu: the CLI (commands, flags, ops), the config loader (keys, dtypes,
// invariants), the daemon and the reports all use it, so a typo gets the same hint everywhere.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuemu::util {

// Edits (insert, delete, substitute, swap adjacent letters) turning `a` into `b`, ignoring ASCII
// case: optimal string alignment, so "rleu" is one edit from "relu".
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a third of the word's length (at least one edit), or nothing.
// Ties go to the earlier candidate, so callers list the most common names first.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates);
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'?", or "" when nothing is close: the form for a diagnostic's "hint: " line.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)", or "": the same words, for the end of a one-line message.
std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates);

// "'a', 'b' or 'c'", for hints that list every allowed value.
std::string quoted_list(std::span<const std::string_view> names);

}  // namespace gpuemu::util
