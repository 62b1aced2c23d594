// Markdown escaping (see markdown_text.hpp).
#include "report/markdown_text.hpp"

#include <algorithm>

namespace gpuemu::report {

std::string markdown_inline(std::string_view in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
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

std::string markdown_fenced(std::string_view info, std::string_view body) {
  std::size_t longest = 0, run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string text(body);
  if (!text.ends_with("\n")) text += "\n";
  return fence + std::string(info) + "\n" + text + fence + "\n";
}

}  // namespace gpuemu::report
