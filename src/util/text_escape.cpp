// Markdown and HTML escaping (text_escape.hpp).
#include "util/text_escape.hpp"

#include <algorithm>

namespace gpuemu::util {
namespace {

// The longest run of backticks in `text`: a fence or span delimiter must be longer.
std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Appends the character reference of & < > (which start markup in HTML and in Markdown alike) and
// returns true; returns false for any other character.
bool append_markup_reference(std::string& out, char c) {
  switch (c) {
    case '&':
      out += "&amp;";
      return true;
    case '<':
      out += "&lt;";
      return true;
    case '>':
      out += "&gt;";
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string markdown_inline(std::string_view in) {
  std::string out;
  for (char c : in) {
    if (append_markup_reference(out, c)) continue;
    switch (c) {
      case '\r':
        break;
      case '\n':
        out += ' ';
        break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '~':
      case '#':
      case '!':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_code(std::string_view in) {
  std::string body;
  for (const char c : in) body += (c == '\n' || c == '\r') ? ' ' : c;
  if (body.empty()) return "` `";
  const std::string ticks(longest_backtick_run(in) + 1, '`');
  // A span that starts or ends with a backtick needs a space inside the delimiters.
  const bool pad = body.front() == '`' || body.back() == '`';
  return ticks + (pad ? " " : "") + body + (pad ? " " : "") + ticks;
}

std::string markdown_fenced(std::string_view info, std::string_view body) {
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  std::string text(body);
  if (!text.ends_with("\n")) text += "\n";
  return fence + std::string(info) + "\n" + text + fence + "\n";
}

std::string html_text(std::string_view in) {
  std::string out;
  for (char c : in) {
    if (append_markup_reference(out, c)) continue;
    if (c == '"') {
      out += "&quot;";
    } else if (c == '\'') {
      out += "&#39;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace gpuemu::util
