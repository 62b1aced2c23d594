// Keeps check/failure_kinds.cpp the one table of failure kinds: the generated copies (Python, VS Code)
// are current, and the schema, docs and SARIF rules list exactly its kinds; every kind renders.
#include "check/failure_kinds.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/writer.hpp"
#include "test_support.hpp"

namespace gpuemu::check {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> case_kind_names() {
  std::vector<std::string> out;
  for (const auto& row : failure_kinds()) {
    if (is_case_kind(row.kind)) out.emplace_back(row.name);
  }
  return out;
}

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::wrong_result:
      return "WrongResult";
    case Tier::numeric:
      return "Numeric";
    case Tier::regression:
      return "Regression";
    case Tier::artifact:
      return "Artifact";
    case Tier::setup:
      return "Setup";
  }
  return "";
}

std::string python_module() {
  std::string out =
      "# Generated from src/check/failure_kinds.cpp by scripts/gen-failure-kinds.sh: edit the table, not "
      "this file.\n"
      "\"\"\"Every failure kind of result.json (docs/result-json.md) and the reports' SARIF rule "
      "ids.\"\"\"\n\n"
      "# The kinds a case's verdict may have, in the table's order.\nCASE_KINDS = (\n";
  for (const auto& name : case_kind_names()) out += fmt::format("    \"{}\",\n", name);
  out +=
      ")\n\n# Kinds only the reports flag: a baseline regression, a kernel lint violation, an op not run.\n"
      "REPORT_ONLY_KINDS = (\n";
  for (const auto& row : failure_kinds()) {
    if (!is_case_kind(row.kind)) out += fmt::format("    \"{}\",\n", row.name);
  }
  out += ")\n\nRULE_IDS = {\n";
  for (const auto& row : failure_kinds()) out += fmt::format("    \"{}\": \"{}\",\n", row.name, row.rule_id);
  out += "}\n";
  return out;
}

std::string typescript_module() {
  std::string out =
      "// Generated from src/check/failure_kinds.cpp by scripts/gen-failure-kinds.sh: edit the table, not "
      "this file.\n"
      "// The failure kinds of result.json as the extension presents them (failureKinds.ts uses them).\n\n"
      "// Lower tiers are worse: wrong results, numeric drift, baseline regressions, kernel artifact\n"
      "// checks, then failures of the test setup (a crashing reference).\n"
      "export enum Tier {\n";
  for (Tier t : {Tier::wrong_result, Tier::numeric, Tier::regression, Tier::artifact, Tier::setup})
    out += fmt::format("  {} = {},\n", tier_name(t), static_cast<int>(t));
  out +=
      "}\n\n"
      "export interface FailureKind {\n"
      "  name: string; // as in result.json (\"mismatch\")\n"
      "  ruleId: string; // the SARIF ruleId, shown as the diagnostic's code\n"
      "  title: string;\n"
      "  tier: Tier;\n"
      "  caseKind: boolean; // false for the report-only kinds (regression, lint_violation, not_run)\n"
      "}\n\n"
      "export const KINDS: readonly FailureKind[] = [\n";
  for (const auto& row : failure_kinds()) {
    out +=
        fmt::format("  {{ name: '{}', ruleId: '{}', title: '{}', tier: Tier.{}, caseKind: {} }},\n", row.name,
                    row.rule_id, row.title, tier_name(row.tier), is_case_kind(row.kind) ? "true" : "false");
  }
  out += "];\n";
  return out;
}

// Writes `file` with GPUEMU_WRITE_FAILURE_KINDS=1 (scripts/gen-failure-kinds.sh), then compares.
void expect_generated(const fs::path& file, const std::string& text) {
  if (const char* write = std::getenv("GPUEMU_WRITE_FAILURE_KINDS"); write && std::string(write) == "1")
    std::ofstream(file) << text;
  EXPECT_EQ(read_text(file), text) << file
                                   << " is stale: run scripts/gen-failure-kinds.sh after editing "
                                      "src/check/failure_kinds.cpp";
}

TEST(FailureKinds, EveryKindHasOneRowAndItsNameRoundTrips) {
  std::set<std::string_view> names, rule_ids;
  for (int k = 1; k <= static_cast<int>(kLastFailureKind); ++k) {
    const auto kind = static_cast<FailureKind>(k);
    const auto& row = failure_kind_info(kind);
    EXPECT_EQ(row.kind, kind);
    EXPECT_EQ(parse_failure_kind(failure_kind_name(kind)), kind) << k;
    EXPECT_TRUE(is_case_kind(kind)) << k;
  }
  for (const auto& row : failure_kinds()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_TRUE(rule_ids.insert(row.rule_id).second) << row.rule_id;
    EXPECT_TRUE(row.rule_id.starts_with("GPUEMU-")) << row.rule_id;
    EXPECT_FALSE(row.title.empty() || row.help.empty()) << row.name;
    EXPECT_EQ(find_failure_kind(row.name), &row);
  }
  for (auto kind : {FailureKind::regression, FailureKind::lint_violation, FailureKind::not_run}) {
    EXPECT_FALSE(is_case_kind(kind));
    // A report-only name is never a case's kind (result.json refuses it in failures[]).
    EXPECT_EQ(parse_failure_kind(failure_kind_name(kind)), std::nullopt);
  }
  EXPECT_EQ(failure_kinds().size(), static_cast<std::size_t>(kLastFailureKind) + kReportOnlyKinds);
}

TEST(FailureKinds, PythonConstantsAreCurrent) {
  expect_generated(testing::source_dir() / "python/gpuemu/_failure_kinds.py", python_module());
}

TEST(FailureKinds, VsCodeTableIsCurrent) {
  expect_generated(testing::source_dir() / "vscode/src/failureKindTable.ts", typescript_module());
}

// Every enum in the result schema that lists failure kinds (a failures[] entry's kind) lists the case kinds.
TEST(FailureKinds, ResultSchemaEnumIsTheTable) {
  const auto schema = nlohmann::json::parse(read_text(testing::schema_path("result-v1.schema.json")));
  int enums = 0;
  std::vector<const nlohmann::json*> stack{&schema};
  while (!stack.empty()) {
    const nlohmann::json* node = stack.back();
    stack.pop_back();
    if (node->is_object() && node->contains("enum") && (*node)["enum"].is_array()) {
      auto values = (*node)["enum"].get<std::vector<std::string>>();
      if (std::find(values.begin(), values.end(), "mismatch") != values.end()) {
        ++enums;
        EXPECT_EQ(values, case_kind_names());
      }
    }
    if (node->is_structured()) {
      for (const auto& child : *node) stack.push_back(&child);
    }
  }
  EXPECT_GE(enums, 1);
}

TEST(FailureKinds, DocsListEveryKind) {
  const std::string result_md = read_text(testing::source_dir() / "docs/result-json.md");
  for (const auto& row : failure_kinds()) {
    if (is_case_kind(row.kind)) {
      EXPECT_TRUE(std::regex_search(
          result_md, std::regex(fmt::format("\\n\\| `{}` \\|[^\\n]*\\| `{}` \\|\\n", row.name, row.rule_id))))
          << "docs/result-json.md has no table row for " << row.name;
    } else {
      EXPECT_NE(result_md.find(fmt::format("`{}`", row.rule_id)), std::string::npos) << row.rule_id;
    }
  }
  std::string protocol_list = "(`none` when passed";
  for (const auto& name : case_kind_names())
    protocol_list += (name == "mismatch" ? "; `" : ", `") + name + "`";
  EXPECT_NE(read_text(testing::source_dir() / "docs/protocol.md").find(protocol_list + ")"),
            std::string::npos)
      << "docs/protocol.md should list " << protocol_list << ")";
}

// A failing case of every case kind renders in SARIF under its own rule: no kind lacks a row.
TEST(FailureKinds, EveryCaseKindRendersAsItsSarifRule) {
  const auto document = testing::load_fixture("failing.json");
  std::size_t op = 0;
  while (op < document["ops"].size() && document["ops"][op]["failures"].empty()) ++op;
  ASSERT_LT(op, document["ops"].size());
  const nlohmann::json first = document["ops"][op]["failures"][0];
  for (const auto& name : case_kind_names()) {
    auto one = document;
    one["ops"][op]["failures"] = nlohmann::json::array({first});
    one["ops"][op]["failures"][0]["kind"] = name;
    auto text = report::render(one, "sarif", report::RenderOptions{.workspace = "/work/ws"});
    ASSERT_TRUE(text.has_value()) << name << ": " << text.error().message;
    const auto log = nlohmann::json::parse(*text);
    std::set<std::string> rules;
    for (const auto& r : log["runs"][0]["results"]) rules.insert(r["ruleId"].get<std::string>());
    EXPECT_TRUE(rules.contains(std::string(failure_kind_info(*parse_failure_kind(name)).rule_id))) << name;
  }
}

}  // namespace
}  // namespace gpuemu::check
