// Opcode-token patterns (pattern.hpp): parsing with messages that show the accepted syntax, and
// ordered-subsequence matching of glob tokens against an instruction's opcode tokens.
#include "artifact/pattern.hpp"

#include <fmt/format.h>
#include <cctype>

namespace gpuemu::artifact {

std::vector<std::string> opcode_tokens(std::string_view opcode) {
  std::vector<std::string> tokens;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = opcode.find('.', start);
    tokens.emplace_back(
        opcode.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return tokens;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative glob with single-star backtracking: linear in practice, never recursive.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool token_matches(std::string_view pattern, std::string_view token) {
  if (glob_match(pattern, token)) return true;
  const std::size_t scope = token.find("::");
  return scope != std::string_view::npos && glob_match(pattern, token.substr(0, scope));
}

}  // namespace

Expected<OpcodePattern> parse_pattern(std::string_view text) {
  OpcodePattern pattern;
  pattern.text = std::string(text);
  std::string_view body = text;
  bool explicit_target = false;
  if (body.starts_with("ptx:")) {
    body.remove_prefix(4);
    explicit_target = true;
  } else if (body.starts_with("sass:")) {
    body.remove_prefix(5);
    pattern.target = OpcodePattern::Target::sass;
    explicit_target = true;
  }
  const auto bad = [&](std::string_view why) {
    return fail(
        ErrorKind::config,
        fmt::format("instruction pattern '{}' {}: write dot-separated opcode tokens such as \"ld.local\", "
                    "\"st.global.*\" or \"LDG.E.SYS\" (see docs/lint.md)",
                    text, why));
  };
  if (body.empty()) return bad("is empty");
  for (char c : body) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '*' || c == '?' || c == ':' ||
          c == '.')) {
      return bad(fmt::format("has the character '{}'", c));
    }
    if (!explicit_target && std::isupper(static_cast<unsigned char>(c)))
      pattern.target = OpcodePattern::Target::sass;
  }
  pattern.tokens = opcode_tokens(body);
  for (const auto& token : pattern.tokens) {
    if (token.empty()) return bad("has an empty token (two dots in a row, or a leading or trailing dot)");
  }
  return pattern;
}

bool pattern_matches(const OpcodePattern& pattern, std::string_view opcode) {
  const auto tokens = opcode_tokens(opcode);
  if (pattern.tokens.empty() || !token_matches(pattern.tokens[0], tokens[0])) return false;
  std::size_t next = 1;
  for (std::size_t i = 1; i < pattern.tokens.size(); ++i) {
    while (next < tokens.size() && !token_matches(pattern.tokens[i], tokens[next])) ++next;
    if (next == tokens.size()) return false;
    ++next;
  }
  return true;
}

}  // namespace gpuemu::artifact
