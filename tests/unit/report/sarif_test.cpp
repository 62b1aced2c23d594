// Tests for the SARIF writer: the official SARIF 2.1.0 schema (python3 jsonschema) accepts the
// output, rules and fingerprints are stable, results come worst first with repo-relative URIs.
#include <gtest/gtest.h>

#include <fstream>

#include "report/kind_table.hpp"
#include "report/line_hash.hpp"
#include "report/writer.hpp"
#include "test_support.hpp"

namespace gpuemu::report {
namespace {

using testing::load_fixture;

nlohmann::json sarif(const nlohmann::json& result, RenderOptions options = {}) {
  if (options.workspace.empty()) options.workspace = "/work/ws";
  auto text = render(result, "sarif", options);
  EXPECT_TRUE(text.has_value()) << text.error().message;
  return nlohmann::json::parse(text.value_or("{}"));
}

TEST(Sarif, ValidatesAgainstTheOfficialSchema) {
  for (const char* fixture : {"failing.json", "passing.json"}) {
    auto text = render(load_fixture(fixture), "sarif", RenderOptions{.workspace = "/work/ws"});
    ASSERT_TRUE(text.has_value());
    auto check = testing::validate_json(*text, "sarif-2.1.0.json");
    EXPECT_EQ(check.status, 0) << fixture << ": " << check.output;
  }
}

TEST(Sarif, SchemaCheckIsNotVacuous) {
  auto log = sarif(load_fixture("failing.json"));
  log["runs"][0]["results"][0]["level"] = "fatal";  // not a SARIF level
  auto check = testing::validate_json(log.dump(), "sarif-2.1.0.json");
  EXPECT_EQ(check.status, 1);
  EXPECT_NE(check.output.find("$.runs[0].results[0].level"), std::string::npos) << check.output;
}

TEST(Sarif, DriverListsARulePerKind) {
  auto run = sarif(load_fixture("failing.json"))["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "gpuemu");
  EXPECT_EQ(run["tool"]["driver"]["version"], "0.1.0");
  const auto& rules = run["tool"]["driver"]["rules"];
  // The rule ids code scanning has published, in ruleIndex order: written out here, not read from
  // the table, so a renamed, dropped or reordered rule fails. A new kind appends its id.
  const std::vector<std::string> published{"GPUEMU-MISMATCH",
                                           "GPUEMU-NONFINITE-MISMATCH",
                                           "GPUEMU-UNEXPECTED-NONFINITE",
                                           "GPUEMU-SHAPE-MISMATCH",
                                           "GPUEMU-DTYPE-MISMATCH",
                                           "GPUEMU-INVARIANT-VIOLATION",
                                           "GPUEMU-OP-ERROR",
                                           "GPUEMU-REFERENCE-ERROR",
                                           "GPUEMU-MISSING-OUTPUT",
                                           "GPUEMU-INPUT-MUTATED",
                                           "GPUEMU-OUTPUT-ALIASED",
                                           "GPUEMU-REGRESSION",
                                           "GPUEMU-LINT",
                                           "GPUEMU-NOT-RUN",
                                           "GPUEMU-OUT-OF-BOUNDS",
                                           "GPUEMU-INTERPRETER-UNSUPPORTED",
                                           "GPUEMU-KERNEL-NOT-LAUNCHED"};
  std::vector<std::string> ids;
  for (const auto& rule : rules) ids.push_back(rule["id"]);
  EXPECT_EQ(ids, published);
  EXPECT_EQ(rules[1]["name"], "NonfiniteMismatch");
  EXPECT_EQ(rules[1]["shortDescription"]["text"], "NaN/Inf differ from reference");
  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///work/ws/");
  EXPECT_EQ(run["properties"]["seed"], "12345678901234567890");
}

TEST(Sarif, OneResultPerFailingOpDtypeWorstFirst) {
  const auto results = sarif(load_fixture("failing.json"))["runs"][0]["results"];
  std::vector<std::string> order;
  for (const auto& r : results)
    order.push_back(r["properties"]["op"].get<std::string>() + "[" +
                    r["properties"]["dtype"].get<std::string>() + "] " + r["ruleId"].get<std::string>());
  EXPECT_EQ(order, (std::vector<std::string>{
                       "layernorm[float32] GPUEMU-UNEXPECTED-NONFINITE",  // tolerance used: Infinity
                       "softmax[float16] GPUEMU-NONFINITE-MISMATCH",      // tolerance used: Infinity
                       "matmul[bfloat16] GPUEMU-MISSING-OUTPUT",
                       "matmul[float16] GPUEMU-SHAPE-MISMATCH",
                       "gelu[float32] GPUEMU-REGRESSION",
                   }));
  for (const auto& r : results) {
    EXPECT_EQ(r["level"], "error");
    EXPECT_EQ(r["kind"], "fail");
  }
  const auto& softmax = results[1];
  EXPECT_EQ(softmax["message"]["text"],
            "softmax[float16]: NaN/Inf differ from reference in 3 of 10 cases. seed 18446744073709551615: "
            "nonfinite_mismatch: out[1, 0] is NaN where the reference is 0.015 Replay: gpuemu reproduce "
            "18446744073709551615 --op softmax");
  EXPECT_EQ(softmax["properties"]["seed"], "18446744073709551615");
  EXPECT_EQ(softmax["properties"]["max_rel"], "NaN");
  EXPECT_EQ(results[4]["message"]["text"],
            "gelu[float32]: regression against baseline. max_ulp grew from 1 to 2 (x2.0)");
}

TEST(Sarif, RuleIndexPointsAtTheRule) {
  auto run = sarif(load_fixture("failing.json"))["runs"][0];
  for (const auto& r : run["results"]) {
    EXPECT_EQ(run["tool"]["driver"]["rules"][r["ruleIndex"].get<std::size_t>()]["id"], r["ruleId"]);
  }
}

// What GitHub reads beyond the schema: the tool's informationUri, a region with columns where the
// kernel's line is known and readable, and upload-sarif's primaryLocationLineHash beside gpuemu's own.
TEST(Sarif, GithubFieldsWhereTheKernelLineIsKnown) {
  gpuemu::testing::TempDir workspace("sarif-ws");
  std::filesystem::create_directories(workspace / "kernels");
  std::string softmax;
  for (int line = 1; line < 12; ++line) softmax += "# line " + std::to_string(line) + "\n";
  softmax += "    out = tl.exp(x - m)  \n";
  std::ofstream(workspace / "kernels/softmax.py") << softmax;
  const RenderOptions options{.workspace = workspace.path().string()};
  const auto log = sarif(load_fixture("failing.json"), options);
  EXPECT_EQ(log["runs"][0]["tool"]["driver"]["informationUri"], "https://github.com/skelf/gpuemu-action");
  auto check = testing::validate_json(log.dump(), "sarif-2.1.0.json");
  EXPECT_EQ(check.status, 0) << check.output;
  int with_region_columns = 0;
  for (const auto& r : log["runs"][0]["results"]) {
    const auto& fingerprints = r["partialFingerprints"];
    EXPECT_TRUE(fingerprints.contains("gpuemuFinding/v1"));
    if (r["properties"]["op"] != "softmax") {
      // No readable source line (matmul.cu lies outside this workspace, gelu names no line).
      EXPECT_FALSE(fingerprints.contains("primaryLocationLineHash")) << r.dump();
      continue;
    }
    const auto& region = r["locations"][0]["physicalLocation"]["region"];
    EXPECT_EQ(region,
              (nlohmann::json{{"startLine", 12}, {"startColumn", 5}, {"endLine", 12}, {"endColumn", 24}}));
    EXPECT_EQ(fingerprints["primaryLocationLineHash"], primary_location_line_hash(softmax, 12));
    ++with_region_columns;
  }
  EXPECT_GE(with_region_columns, 1);
}

TEST(Sarif, LocationsAreRepoRelative) {
  const auto results = sarif(load_fixture("failing.json"))["runs"][0]["results"];
  auto find = [&](const std::string& op) {
    for (const auto& r : results) {
      if (r["properties"]["op"] == op) return r;
    }
    return nlohmann::json();
  };
  auto matmul = find("matmul")["locations"][0]["physicalLocation"];
  EXPECT_EQ(matmul["artifactLocation"]["uri"], "kernels/matmul.cu");  // was /work/ws/kernels/matmul.cu
  EXPECT_EQ(matmul["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ(matmul["region"]["startLine"], 42);
  EXPECT_EQ(find("gelu")["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "kernels/gelu.py");
  EXPECT_FALSE(find("gelu")["locations"][0]["physicalLocation"].contains("region"));
  EXPECT_FALSE(find("layernorm").contains("locations"));  // no source and no config path

  auto with_config =
      sarif(load_fixture("failing.json"), RenderOptions{.config_path = "configs/my gpuemu.toml"});
  for (const auto& r : with_config["runs"][0]["results"]) {
    if (r["properties"]["op"] != "layernorm") continue;
    EXPECT_EQ(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "configs/my%20gpuemu.toml");
  }
}

TEST(Sarif, FingerprintsDependOnOpDtypeAndKindOnly) {
  auto before = load_fixture("failing.json");
  auto after = before;
  auto& failure = after["ops"][3]["failures"][1];  // softmax's nonfinite_mismatch
  failure["seed"] = "99";
  failure["message"] = "different words";
  after["seed"] = "7";
  auto fingerprint = [](const nlohmann::json& log, const std::string& op) {
    for (const auto& r : log["runs"][0]["results"]) {
      if (r["properties"]["op"] == op) return r["partialFingerprints"]["gpuemuFinding/v1"].get<std::string>();
    }
    return std::string();
  };
  EXPECT_EQ(fingerprint(sarif(before), "softmax"), fingerprint(sarif(after), "softmax"));
  EXPECT_EQ(fingerprint(sarif(before), "softmax").size(), 32u);
  EXPECT_NE(fingerprint(sarif(before), "softmax"), fingerprint(sarif(before), "matmul"));
  failure["kind"] = "mismatch";
  failure["tolerance_used"] = 9.0;
  EXPECT_NE(fingerprint(sarif(before), "softmax"), fingerprint(sarif(after), "softmax"));
}

TEST(Sarif, PassingRunHasNoResults) {
  auto run = sarif(load_fixture("passing.json"))["runs"][0];
  EXPECT_TRUE(run["results"].empty());
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], true);
  EXPECT_FALSE(run["invocations"][0].contains("toolExecutionNotifications"));
}

}  // namespace
}  // namespace gpuemu::report
