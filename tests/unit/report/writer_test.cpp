// Tests for the format table: every row renders the fixtures, unknown formats get a suggestion,
// and an invalid document is refused before any writer sees it.
#include "report/writer.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::load_fixture;

TEST(Writer, TableHasEveryFormat) {
  std::vector<std::string> formats;
  for (const auto& row : writers()) formats.emplace_back(row.format);
  EXPECT_EQ(formats, (std::vector<std::string>{"text", "json", "junit", "sarif", "markdown"}));
  for (const auto& row : writers()) {
    auto out = render(load_fixture("failing.json"), row.format);
    ASSERT_TRUE(out.has_value()) << row.format;
    EXPECT_FALSE(out->empty()) << row.format;
  }
}

TEST(Writer, JsonRoundTripsNonFiniteNumbersAndSeeds) {
  auto result = load_fixture("failing.json");
  auto text = render(result, "json").value();
  EXPECT_EQ(nlohmann::json::parse(text), result);
  EXPECT_NE(text.find("\"seed\": \"18446744073709551615\""), std::string::npos);
  EXPECT_NE(text.find("\"max_rel\": \"NaN\""), std::string::npos);
}

TEST(Writer, UnknownFormatSuggests) {
  auto out = render(load_fixture("passing.json"), "sarf");
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().kind, ErrorKind::usage);
  EXPECT_EQ(out.error().message,
            "unknown report format 'sarf' (did you mean 'sarif'?); the formats are text, json, junit, sarif, "
            "markdown");
}

TEST(Writer, InvalidDocumentIsRefused) {
  auto result = load_fixture("passing.json");
  result["ops"][0].erase("failures");
  auto out = render(result, "junit");
  ASSERT_FALSE(out.has_value());
  EXPECT_TRUE(out.error().message.starts_with("result.json: ops[0].failures is missing"))
      << out.error().message;
}

}  // namespace
}  // namespace gpuemu::report
