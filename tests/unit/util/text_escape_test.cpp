// util/text_escape: hostile text (HTML comments, Markdown syntax, backticks, line breaks) renders
// as text in the Markdown and HTML that reports, reviews and attestation pages are made of.
#include "util/text_escape.hpp"

#include <gtest/gtest.h>

namespace gpuemu::util {
namespace {

TEST(TextEscape, MarkdownPiecesSurviveHostileText) {
  EXPECT_EQ(markdown_inline("<!-- x --> *a* [b](c) | `d`\ne"),
            "&lt;\\!-- x --&gt; \\*a\\* \\[b\\](c) \\| \\`d\\` e");
  EXPECT_EQ(markdown_code("plain"), "`plain`");
  EXPECT_EQ(markdown_code("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code("`x``"), "``` `x`` ```");
  EXPECT_EQ(markdown_code(""), "` `");
  EXPECT_EQ(markdown_fenced("sh", "echo ```"), "````sh\necho ```\n````\n");
}

TEST(TextEscape, ACarriageReturnLineBreakIsOneSpaceInText) {
  // The attestation report's escaper once turned "\r\n" into two spaces, the job summary's into one.
  EXPECT_EQ(markdown_inline("a\r\nb\nc\rd"), "a b cd");
  EXPECT_EQ(markdown_code("a\r\nb"), "`a  b`");  // a code span keeps every character's place
}

TEST(TextEscape, HtmlTextEscapesMarkupAndBothQuotes) {
  EXPECT_EQ(html_text("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
  EXPECT_EQ(html_text("plain"), "plain");
}

}  // namespace
}  // namespace gpuemu::util
