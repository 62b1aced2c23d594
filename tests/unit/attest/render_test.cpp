// Tests of attest/render.hpp: both views show the measured tables, failures with seeds,
// subjects and the verification status, and escape everything taken from the report.
#include "attest/render.hpp"

#include "signed_fixture.hpp"

namespace gpuemu::attest {
namespace {

using nlohmann::json;
using testing::SignedFixture;

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(Render, MarkdownShowsTheMeasurementsAndTheStatus) {
  SignedFixture f;
  auto status = verify(f.envelope, f.public_key(), f.project).status();
  auto md = render_report(f.envelope, status, RenderFormat::markdown);
  ASSERT_TRUE(md) << md.error().message;
  EXPECT_TRUE(contains(*md, "**Verification:** valid: valid Ed25519 signature by key " + f.key_id)) << *md;
  EXPECT_TRUE(contains(*md, "| Tool | gpuemu 0.1.0 |"));
  EXPECT_TRUE(contains(*md, "| Master seed | 18446744073709551557 |"));
  EXPECT_TRUE(
      contains(*md, "| Config digest | 5f1c0d2e9a7b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5 |"));
  EXPECT_TRUE(contains(*md, "| Timestamp | 2026-01-01T00:00:00Z |"));
  EXPECT_TRUE(contains(*md,
                       "| softmax | kernels/softmax.py | float16 | 20 | 19 | 1 | 0 | NaN | NaN | Infinity | "
                       "0.41 | 0.01 | 0.01 |"))
      << *md;
  EXPECT_TRUE(contains(*md, "| matmul | kernels/matmul.py | float32 | 10 | 10 | 0 | 0 | 3.815e-06 |")) << *md;
  EXPECT_TRUE(
      contains(*md, "| softmax | 9007199254740993 | nan\\_mismatch | float16 | x=\\[3,65504\\] | NaN |"))
      << *md;
  EXPECT_TRUE(contains(*md, "| reference/softmax\\_ref.py | reference | "));
  EXPECT_FALSE(contains(*md, "SECRET_TOKEN"));
}

TEST(Render, HtmlIsAWholeDocumentWithTheSameFacts) {
  SignedFixture f;
  auto html = render_report(f.envelope, verify(f.envelope, f.public_key()).status(), RenderFormat::html);
  ASSERT_TRUE(html) << html.error().message;
  EXPECT_TRUE(html->starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(html->ends_with("</html>\n"));
  EXPECT_TRUE(contains(*html, "<p class=\"valid\"><strong>Verification:</strong> valid: "));
  EXPECT_TRUE(contains(*html, "<tr><td>softmax</td><td>9007199254740993</td><td>nan_mismatch</td>")) << *html;
  EXPECT_TRUE(contains(*html, "<td>gpuemu reproduce 9007199254740993 --op softmax</td>"));
}

TEST(Render, UnverifiedAndInvalidReportsSaySo) {
  SignedFixture f;
  auto md = render_report(f.envelope, VerifyStatus{}, RenderFormat::markdown);
  ASSERT_TRUE(md);
  EXPECT_TRUE(contains(*md, "**Verification:** not verified"));

  testing::write_text(f.project / "kernels/matmul.py", "changed\n");
  auto html =
      render_report(f.envelope, verify(f.envelope, f.public_key(), f.project).status(), RenderFormat::html);
  ASSERT_TRUE(html);
  EXPECT_TRUE(contains(*html,
                       "<p class=\"invalid\"><strong>Verification:</strong> INVALID: subject "
                       "&#39;kernels/matmul.py&#39; changed since signing"))
      << *html;
}

TEST(Render, EverythingFromTheReportIsEscaped) {
  SignedFixture f;
  json statement = f.statement;
  statement["predicate"]["ops"][0]["op"] = "<script>alert('x')</script>|**bold**";
  json envelope = f.sign(statement);
  auto html = render_report(envelope, VerifyStatus{}, RenderFormat::html);
  ASSERT_TRUE(html);
  EXPECT_FALSE(contains(*html, "<script>"));
  EXPECT_TRUE(contains(*html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;|**bold**"));
  auto md = render_report(envelope, VerifyStatus{}, RenderFormat::markdown);
  ASSERT_TRUE(md);
  EXPECT_FALSE(contains(*md, "<script>"));
  EXPECT_TRUE(contains(*md, "&lt;script&gt;alert('x')&lt;/script&gt;\\|\\*\\*bold\\*\\*"));
}

TEST(Render, NoOpsAndNoFailuresAreStatedPlainly) {
  SignedFixture f;
  json statement = f.statement;
  statement["predicate"]["ops"] = json::array();
  auto md = render_report(f.sign(statement), VerifyStatus{}, RenderFormat::markdown);
  ASSERT_TRUE(md);
  EXPECT_TRUE(contains(*md, "No ops were run."));
  EXPECT_TRUE(contains(*md, "No failing cases."));
}

TEST(Render, APartialRunThatPassedDoesNotSayAllCasesPassed) {
  SignedFixture f;
  json statement = f.statement;
  statement["predicate"]["passed"] = true;
  statement["predicate"]["partial"] = false;
  auto whole = render_report(f.sign(statement), VerifyStatus{}, RenderFormat::markdown);
  ASSERT_TRUE(whole);
  EXPECT_TRUE(contains(*whole, "| Result | all cases passed |")) << *whole;
  statement["predicate"]["partial"] = true;  // gpuemu ci run --allow-partial
  auto partial = render_report(f.sign(statement), VerifyStatus{}, RenderFormat::markdown);
  ASSERT_TRUE(partial);
  EXPECT_FALSE(contains(*partial, "all cases passed")) << *partial;
  EXPECT_TRUE(contains(*partial, "| Result | no failures in the cases that ran; not every planned case ran |"))
      << *partial;
  EXPECT_TRUE(contains(*partial, "| Partial run | yes (stopped before all cases ran) |")) << *partial;
}

TEST(Render, DetectsEnvelopesAndRejectsWhatIsNotAReport) {
  SignedFixture f;
  EXPECT_TRUE(is_dsse_envelope(f.envelope));
  EXPECT_FALSE(is_dsse_envelope(testing::fixture_result()));
  auto bad = render_report(f.sign("text"), VerifyStatus{}, RenderFormat::html);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "statement: the payload is not a JSON object");
}

}  // namespace
}  // namespace gpuemu::attest
