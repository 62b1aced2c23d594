// Escaping untrusted text (op names, messages, script output) for the documents gpuemu writes:
// Markdown (job summaries, pull-request reviews, attestation reports) and HTML. One module, so a
// string renders as text the same way in every report.
#pragma once

#include <string>
#include <string_view>

namespace gpuemu::util {

// Text inside a Markdown paragraph or table cell: no HTML, no Markdown syntax, no line breaks
// ("\r" is dropped, "\n" becomes a space, so "\r\n" is one space).
std::string markdown_inline(std::string_view in);
// A Markdown code span that survives backticks in `in` (line breaks become spaces).
std::string markdown_code(std::string_view in);
// A fenced block whose fence is longer than any backtick run inside `body`.
std::string markdown_fenced(std::string_view info, std::string_view body);
// Text inside an HTML element or a quoted attribute: & < > " ' as character references.
std::string html_text(std::string_view in);

}  // namespace gpuemu::util
