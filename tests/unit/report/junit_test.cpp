// Tests for the JUnit writer: the real xmllint validates both flavours against the vendored XSDs,
// and the structure, failure text, escaping and counts are read back with pugixml.
#include <gtest/gtest.h>
#include <pugixml.hpp>

#include "report/writer.hpp"
#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::load_fixture;

std::string junit(const nlohmann::json& result, JunitFlavor flavor = JunitFlavor::standard) {
  RenderOptions options;
  options.junit_flavor = flavor;
  options.workspace = "/work/ws";
  auto xml = render(result, "junit", options);
  EXPECT_TRUE(xml.has_value()) << xml.error().message;
  return xml.value_or("");
}

pugi::xml_node testcase(const pugi::xml_document& document, const char* name) {
  return document.select_node(("//testcase[@name='" + std::string(name) + "']").c_str()).node();
}

TEST(Junit, StandardFlavourValidatesAndNeedsTheExtendedSchema) {
  std::string xml = junit(load_fixture("failing.json"));
  auto standard = testing::validate_xml(xml, "junit.xsd");
  EXPECT_EQ(standard.status, 0) << standard.output << xml;
  // Jenkins xUnit refuses file/line, which is why the strict flavour exists.
  auto jenkins = testing::validate_xml(xml, "junit-jenkins.xsd");
  EXPECT_NE(jenkins.status, 0);
  EXPECT_NE(jenkins.output.find("attribute 'file' is not allowed"), std::string::npos) << jenkins.output;
}

TEST(Junit, StrictFlavourValidatesAgainstJenkinsSchema) {
  for (const char* fixture : {"failing.json", "passing.json"}) {
    std::string xml = junit(load_fixture(fixture), JunitFlavor::strict);
    auto check = testing::validate_xml(xml, "junit-jenkins.xsd");
    EXPECT_EQ(check.status, 0) << fixture << ": " << check.output << xml;
    EXPECT_EQ(xml.find("file="), std::string::npos);
    EXPECT_EQ(xml.find("line="), std::string::npos);
  }
}

TEST(Junit, SuitePerOpCasePerDtype) {
  pugi::xml_document document;
  ASSERT_TRUE(document.load_string(junit(load_fixture("failing.json")).c_str()));
  auto suites = document.child("testsuites");
  EXPECT_STREQ(suites.attribute("name").value(), "gpuemu demo-kernels <&>");
  EXPECT_EQ(suites.attribute("tests").as_int(), 6);
  EXPECT_EQ(suites.attribute("failures").as_int(), 4);  // softmax f16, matmul f16, matmul bf16, layernorm f32
  EXPECT_EQ(suites.attribute("errors").as_int(), 0);
  EXPECT_STREQ(suites.attribute("time").value(), "12.500");
  std::vector<std::string> names;
  for (auto suite : suites.children("testsuite")) names.push_back(suite.attribute("name").value());
  EXPECT_EQ(names, (std::vector<std::string>{"gelu", "layernorm", "matmul", "softmax"}));

  auto passing = testcase(document, "softmax[float32]");
  ASSERT_TRUE(passing);
  EXPECT_STREQ(passing.attribute("classname").value(), "softmax");
  EXPECT_STREQ(passing.attribute("file").value(), "kernels/softmax.py");
  EXPECT_EQ(passing.attribute("line").as_int(), 12);
  EXPECT_FALSE(passing.first_child());

  // An absolute source under the workspace becomes repo-relative; no source, no attributes.
  EXPECT_STREQ(testcase(document, "matmul[float16]").attribute("file").value(), "kernels/matmul.cu");
  EXPECT_FALSE(testcase(document, "layernorm[float32]").attribute("file"));
  EXPECT_STREQ(testcase(document, "gelu[float32]").attribute("file").value(), "kernels/gelu.py");
  EXPECT_FALSE(testcase(document, "gelu[float32]").attribute("line"));
}

TEST(Junit, FailureTextCarriesReplayLocationAndStatistics) {
  pugi::xml_document document;
  ASSERT_TRUE(document.load_string(junit(load_fixture("failing.json")).c_str()));
  auto failure = testcase(document, "softmax[float16]").child("failure");
  ASSERT_TRUE(failure);
  // The worst case leads: a NaN where the reference is finite outranks a tolerance overshoot.
  EXPECT_STREQ(failure.attribute("type").value(), "nonfinite_mismatch");
  EXPECT_STREQ(
      failure.attribute("message").value(),
      "seed 18446744073709551615: nonfinite_mismatch: out[1, 0] is NaN where the reference is 0.015");
  std::string text = failure.text().get();
  EXPECT_TRUE(text.starts_with("softmax[float16]: 3 of 10 cases failed\nat kernels/softmax.py:12\n")) << text;
  EXPECT_NE(text.find("replay: gpuemu reproduce 1234567890123456789 --op softmax"), std::string::npos);
  EXPECT_NE(text.find("replay: gpuemu reproduce 18446744073709551615 --op softmax"), std::string::npos);
  EXPECT_NE(text.find("worst out[1, 0]: actual NaN, expected 0.015 (abs err NaN, rel err NaN)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("max_abs Infinity"), std::string::npos);
  EXPECT_NE(text.find("shapes x=[4, 65], dims N=65"), std::string::npos);
  // Unicode and XML specials survive the round trip.
  EXPECT_NE(text.find("<b>&amp;</b> \"quoted\" 'single' 100% done, a:b,c | pipe `tick`"), std::string::npos);
  EXPECT_NE(text.find("Ünïcödé ✓ 日本語 😀"), std::string::npos);

  auto properties = document.select_node("//testsuite[@name='softmax']/properties").node();
  EXPECT_STREQ(properties.find_child_by_attribute("name", "seed").attribute("value").value(),
               "12345678901234567890");
  EXPECT_STREQ(properties.find_child_by_attribute("name", "float16.failing_seeds").attribute("value").value(),
               "1234567890123456789 18446744073709551615 42");
  EXPECT_STREQ(properties.find_child_by_attribute("name", "float16.shapes").attribute("value").value(),
               "x=[4, 65]");
  EXPECT_STREQ(properties.find_child_by_attribute("name", "source").attribute("value").value(),
               "kernels/softmax.py:12");
}

TEST(Junit, ControlCharactersFromStderrStayValidXml) {
  std::string xml = junit(load_fixture("failing.json"));
  pugi::xml_document document;
  ASSERT_TRUE(document.load_string(xml.c_str()));
  std::string text = testcase(document, "matmul[float16]").child("failure").text().get();
  EXPECT_NE(text.find("    \\x1b[31mRuntimeError: <bad> & \"worse\" Ünïcödé ✓\\x1b[0m\\x00\\x07"),
            std::string::npos)
      << text;
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
}

TEST(Junit, OnlyErrorsBecomeAnErrorElement) {
  auto result = load_fixture("failing.json");
  auto& failures = result["ops"][2]["failures"];  // matmul
  nlohmann::json only_errors = nlohmann::json::array();
  for (const auto& f : failures) {
    if (f["kind"] == "op_error" || f["kind"] == "reference_error") only_errors.push_back(f);
  }
  failures = only_errors;
  pugi::xml_document document;
  ASSERT_TRUE(document.load_string(junit(result).c_str()));
  auto suite = document.select_node("//testsuite[@name='matmul']").node();
  EXPECT_EQ(suite.attribute("errors").as_int(), 2);
  EXPECT_EQ(suite.attribute("failures").as_int(), 0);
  EXPECT_STREQ(testcase(document, "matmul[bfloat16]").child("error").attribute("type").value(),
               "reference_error");
}

TEST(Junit, DtypeThatNeverRanIsSkipped) {
  auto result = load_fixture("passing.json");
  result["partial"] = true;
  auto& dtype = result["ops"][1]["dtypes"][1];
  dtype["total"] = 0;
  dtype["passed"] = 0;
  std::string xml = junit(result, JunitFlavor::strict);
  EXPECT_EQ(testing::validate_xml(xml, "junit-jenkins.xsd").status, 0);
  pugi::xml_document document;
  ASSERT_TRUE(document.load_string(xml.c_str()));
  EXPECT_TRUE(testcase(document, "softmax[float16]").child("skipped"));
  EXPECT_EQ(document.select_node("//testsuite[@name='softmax']").node().attribute("skipped").as_int(), 1);
  EXPECT_TRUE(document.select_node("//testsuite[@name='softmax']/properties/property[@name='partial']"));
}

}  // namespace
}  // namespace gpuemu::report
