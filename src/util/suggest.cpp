// Edit-distance suggestions (see suggest.hpp): optimal string alignment over three rolling rows,
// which is plenty for the few dozen names a suggestion ever compares against.
#include "util/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace gpuemu::util {
namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::vector<std::string_view> views(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // Three rows suffice for optimal string alignment (the swap looks two rows back).
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates) {
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  return closest_match(word, views(candidates));
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const auto match = closest_match(word, candidates);
  return match ? "did you mean '" + *match + "'?" : std::string();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  return did_you_mean(word, views(candidates));
}

std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string hint = did_you_mean(word, candidates);
  return hint.empty() ? hint : " (" + hint + ")";
}

std::string quoted_list(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'";
    out += names[i];
    out += "'";
  }
  return out;
}

}  // namespace gpuemu::util
