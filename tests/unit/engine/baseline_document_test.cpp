// engine/baseline_document: a baseline written by make_baseline reads back the same through
// parse_baseline (entries decoded by result's (op, dtype) reader), and every wrong or missing field is
// an error naming the file and the field (docs/baselines.md, "The document").
#include "engine/baseline_document.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include <gtest/gtest.h>

namespace gpuemu::engine {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kFix = "; re-export the baseline with 'gpuemu baseline export TAG FILE'";

BaselineEntry entry(std::string op, tensor::DType dtype, double max_abs, double max_rel) {
  BaselineEntry e;
  e.op = std::move(op);
  auto& d = e.summary;
  d.dtype = dtype;
  d.total = 200;
  d.passed = 197;
  d.failed = 2;
  d.errors = 1;
  d.max_abs = max_abs;
  d.max_rel = max_rel;
  d.max_ulp = 3;
  d.tolerance_used = 0.25;
  d.tolerance = {1e-3, 2e-3};
  return e;
}

nlohmann::json one_entry_document() {
  return make_baseline("main", "ab12", 42, {entry("softmax", tensor::DType::float16, 1e-4, 2e-4)});
}

std::string message_for(const nlohmann::json& document) {
  const auto parsed = parse_baseline(document, "doc.json");
  EXPECT_FALSE(parsed.has_value());
  return parsed ? std::string("(parsed)") : parsed.error().message;
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

TEST(BaselineDocument, WhatMakeBaselineWritesReadsBackTheSameIncludingNonFiniteStatistics) {
  const std::vector<BaselineEntry> written = {entry("softmax", tensor::DType::float16, 1e-4, 2e-4),
                                              entry("matmul/tiled", tensor::DType::bfloat16, kInf, kNaN)};
  // Through text, as a file or a remote store hands it over.
  const auto document = nlohmann::json::parse(make_baseline("main", "ab12", 42, written).dump());
  const auto read = parse_baseline(document, "doc.json");
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    const auto& a = written[i].summary;
    const auto& b = (*read)[i].summary;
    EXPECT_EQ((*read)[i].op, written[i].op);
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(std::tie(b.total, b.passed, b.failed, b.errors),
              std::tie(a.total, a.passed, a.failed, a.errors));
    EXPECT_TRUE(same(b.max_abs, a.max_abs)) << i;
    EXPECT_TRUE(same(b.max_rel, a.max_rel)) << i;
    EXPECT_EQ(b.max_ulp, a.max_ulp);
    EXPECT_EQ(b.tolerance_used, a.tolerance_used);
    EXPECT_EQ(b.tolerance.atol, a.tolerance.atol);
    EXPECT_EQ(b.tolerance.rtol, a.tolerance.rtol);
  }
}

TEST(BaselineDocument, EveryMissingEntryFieldIsAnErrorNamingTheFileAndTheField) {
  // Before, a missing statistic or count read as 0: a baseline cut short then "passed" with no error.
  for (const char* key : {"op", "dtype", "total", "passed", "failed", "errors", "max_abs", "max_rel",
                          "max_ulp", "tolerance_used", "atol", "rtol"}) {
    SCOPED_TRACE(key);
    auto document = one_entry_document();
    document["entries"][0].erase(key);
    EXPECT_EQ(message_for(document), fmt::format("doc.json: \"entries[0].{}\" is missing{}", key, kFix));
  }
}

TEST(BaselineDocument, MissingEntriesOrSchemaVersionAreErrorsToo) {
  auto document = one_entry_document();
  document.erase("entries");
  EXPECT_EQ(message_for(document), fmt::format("doc.json: \"entries\" is missing{}", kFix));
  document = one_entry_document();
  document.erase("schema_version");
  EXPECT_EQ(message_for(document), fmt::format("doc.json: \"schema_version\" is missing{}", kFix));
}

TEST(BaselineDocument, FieldsOfTheWrongTypeNameTheFieldAndWhatItMustBe) {
  const std::string whole = "a whole number from 0 to 2147483647";
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& d) { d["entries"] = "oops"; }, "\"entries\" must be an array"},
      {[](nlohmann::json& d) { d["entries"][0] = "oops"; }, "\"entries[0]\" must be an object"},
      {[](nlohmann::json& d) { d["entries"][0]["op"] = 7; }, "\"entries[0].op\" must be a string"},
      {[](nlohmann::json& d) { d["entries"][0]["total"] = 1e20; }, "\"entries[0].total\" must be " + whole},
      {[](nlohmann::json& d) { d["entries"][0]["failed"] = -1; }, "\"entries[0].failed\" must be " + whole},
      // An int holds the counts: one past its range is refused, not wrapped.
      {[](nlohmann::json& d) { d["entries"][0]["passed"] = 2147483648LL; },
       "\"entries[0].passed\" must be " + whole},
      {[](nlohmann::json& d) { d["entries"][0]["max_abs"] = nullptr; },
       "\"entries[0].max_abs\" must be a number or \"NaN\", \"Infinity\", \"-Infinity\""},
      {[](nlohmann::json& d) { d["entries"][0]["rtol"] = "tiny"; },
       "\"entries[0].rtol\" must be a number or \"NaN\", \"Infinity\", \"-Infinity\""},
      {[](nlohmann::json& d) { d["schema_version"] = "1"; }, "\"schema_version\" must be " + whole},
      {[](nlohmann::json& d) { d["entries"][0]["op"] = ""; },
       "\"entries[0].op\" is empty; it must name an op"},
      {[](nlohmann::json& d) { d["entries"][0]["dtype"] = "float99"; },
       "\"entries[0].dtype\" is \"float99\", not a dtype name such as float32"},
  };
  for (const auto& [edit, what] : cases) {
    auto document = one_entry_document();
    edit(document);
    EXPECT_EQ(message_for(document), "doc.json: " + what + std::string(kFix));
  }
}

TEST(BaselineDocument, TheFirstWrongEntryIsTheOneNamed) {
  auto document =
      make_baseline("main", "", 1,
                    {entry("a", tensor::DType::float32, 0, 0), entry("b", tensor::DType::float32, 0, 0),
                     entry("c", tensor::DType::float32, 0, 0)});
  document["entries"][1].erase("atol");
  document["entries"][2].erase("op");
  EXPECT_EQ(message_for(document), fmt::format("doc.json: \"entries[1].atol\" is missing{}", kFix));
}

TEST(BaselineDocument, ForeignDocumentsAndOtherVersionsKeepTheirMessages) {
  EXPECT_EQ(message_for(nlohmann::json::array()),
            "doc.json is not a gpuemu baseline document (no \"kind\": \"gpuemu-baseline\"); create one with "
            "'gpuemu baseline export TAG FILE'");
  auto document = one_entry_document();
  document["schema_version"] = 2;
  EXPECT_EQ(message_for(document),
            "doc.json has baseline schema_version 2, this gpuemu reads 1; re-export it with this version");
}

TEST(BaselineDocument, AnEmptyBaselineIsValid) {
  const auto read = parse_baseline(make_baseline("main", "", 1, {}), "doc.json");
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_TRUE(read->empty());
}

}  // namespace
}  // namespace gpuemu::engine
