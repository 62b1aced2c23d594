// Tests for report/result_document: validation names the offending field, numbers decode their
// non-finite spellings, sources split into path and line, and paths become repo-relative.
#include "report/result_document.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::load_fixture;

TEST(ResultDocument, FixturesAreValid) {
  EXPECT_TRUE(validate_result(load_fixture("failing.json")).has_value());
  EXPECT_TRUE(validate_result(load_fixture("passing.json")).has_value());
}

TEST(ResultDocument, FixturesMatchTheJsonSchema) {
  for (const char* name : {"failing.json", "passing.json"}) {
    auto check = testing::validate_json(load_fixture(name).dump(), "result-v1.schema.json");
    EXPECT_EQ(check.status, 0) << name << ": " << check.output;
  }
}

TEST(ResultDocument, JsonSchemaRejectsWhatValidationRejects) {
  auto document = load_fixture("failing.json");
  document["ops"][3]["failures"][0]["seed"] = 1234;  // a number loses precision in JavaScript
  auto check = testing::validate_json(document.dump(), "result-v1.schema.json");
  EXPECT_EQ(check.status, 1) << check.output;
  EXPECT_NE(check.output.find("$.ops[3].failures[0].seed"), std::string::npos) << check.output;
  auto error = validate_result(document, "out/result.json");
  ASSERT_FALSE(error.has_value());
  EXPECT_EQ(
      error.error().message,
      "out/result.json: ops[3].failures[0].seed should be a seed as a decimal string, found 1234; the file "
      "is not a gpuemu result.json version 1 (regenerate it with this gpuemu, or use the gpuemu that wrote "
      "it)");
  EXPECT_EQ(error.error().kind, ErrorKind::parse);
}

TEST(ResultDocument, RejectsUnknownKindsVersionsAndMissingFields) {
  auto document = load_fixture("failing.json");
  document["ops"][2]["failures"][1]["kind"] = "regression";
  EXPECT_NE(validate_result(document).error().message.find(
                "ops[2].failures[1].kind names an unknown failure kind \"regression\""),
            std::string::npos);

  document = load_fixture("passing.json");
  document["schema_version"] = 2;
  EXPECT_NE(validate_result(document).error().message.find(
                "result.json: schema_version is 2 but this gpuemu reads version 1"),
            std::string::npos);

  document = load_fixture("passing.json");
  document["ops"][1]["dtypes"][0].erase("max_ulp");
  EXPECT_NE(validate_result(document).error().message.find("ops[1].dtypes[0].max_ulp is missing"),
            std::string::npos);

  document = load_fixture("passing.json");
  document["ops"][0]["dtypes"][0]["max_abs"] = "nan";  // only "NaN" is the spelling
  EXPECT_FALSE(validate_result(document).has_value());

  document = load_fixture("passing.json");
  document["seed"] = "18446744073709551616";  // 2^64 does not fit
  EXPECT_NE(validate_result(document).error().message.find("seed should be a seed"), std::string::npos);
  EXPECT_FALSE(validate_result(nlohmann::json::array()).has_value());
}

TEST(ResultDocument, LoadNamesTheFile) {
  testing::TempDir dir;
  auto missing = load_result(dir / "nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::io);
  EXPECT_TRUE(missing.error().message.starts_with("cannot read the result document '" +
                                                  (dir / "nope.json").string() + "'"));

  testing::write_file(dir / "cut.json", R"({"schema_version": 1, "ops": [)");
  auto cut = load_result(dir / "cut.json");
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().message, (dir / "cut.json").string() +
                                     ": not valid JSON (truncated or not a result.json); regenerate it with "
                                     "`gpuemu ci run`");

  testing::write_file(dir / "ok.json", load_fixture("failing.json").dump());
  auto ok = load_result(dir / "ok.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->project, "demo-kernels <&>");
}

TEST(ResultDocument, ParsesSources) {
  auto with_line = parse_source("kernels/softmax.cu:42");
  EXPECT_EQ(with_line.path, "kernels/softmax.cu");
  EXPECT_EQ(with_line.line, 42);
  auto bare = parse_source("kernels/gelu.py");
  EXPECT_EQ(bare.path, "kernels/gelu.py");
  EXPECT_EQ(bare.line, 0);
  auto odd = parse_source("weird:name.py");
  EXPECT_EQ(odd.path, "weird:name.py");
  EXPECT_FALSE(parse_source("").known());
}

TEST(ResultDocument, MakesPathsRepoRelative) {
  EXPECT_EQ(repo_relative("/work/ws/kernels/matmul.cu", "/work/ws"), "kernels/matmul.cu");
  EXPECT_EQ(repo_relative("/work/ws/kernels/matmul.cu", "/work/ws/"), "kernels/matmul.cu");
  EXPECT_EQ(repo_relative("/work/ws/./kernels/../kernels/a.py", "/work/ws"), "kernels/a.py");
  EXPECT_EQ(repo_relative("./kernels/a.py", "/work/ws"), "kernels/a.py");
  EXPECT_EQ(repo_relative("/elsewhere/a.py", "/work/ws"), "/elsewhere/a.py");
  EXPECT_EQ(repo_relative("/work/wsx/a.py", "/work/ws"), "/work/wsx/a.py");
  EXPECT_EQ(repo_relative("/work/ws/a.py", ""), "/work/ws/a.py");
}

}  // namespace
}  // namespace gpuemu::report
