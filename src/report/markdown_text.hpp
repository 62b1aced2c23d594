// Markdown escaping shared by the summary writer and the pull-request review text, so untrusted
// strings (op names, messages, script output) render as text on GitHub, never as markup.
#pragma once

#include <string>
#include <string_view>

namespace gpuemu::report {

// Text inside a paragraph or table cell: no HTML, no Markdown syntax, no line breaks.
std::string markdown_inline(std::string_view in);
// A fenced block whose fence is longer than any backtick run inside `body`.
std::string markdown_fenced(std::string_view info, std::string_view body);

}  // namespace gpuemu::report
