// GitHub Actions publishing (see publish.hpp). Everything comes from result.json through the
// report module's findings, so annotations, SARIF and the summary agree on what is worst.
#include "github/publish.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "github/workflow_commands.hpp"
#include "report/findings.hpp"
#include "report/value_text.hpp"
#include "report/writer.hpp"

namespace gpuemu::github {
namespace {

std::string annotation_message(const report::Finding& f) {
  if (f.violation) return f.headline() + "\nReplay: " + f.replay();
  if (!f.worst) return f.headline();
  std::string text = std::to_string(f.failing_cases) + " of " + std::to_string(f.total_cases) +
                     " cases failed. " + f.headline() + "\nReplay: " + f.replay();
  return text;
}

// Scripts' stderr echoed per annotated finding; more is in the job summary and result.json.
constexpr int kStderrPerFinding = 3;

// A script's stderr is untrusted text that may contain "::" lines: print it with workflow
// commands stopped under a fresh token, inside a collapsible group.
void echo_script_output(const report::Finding& f, std::ostream& log) {
  int shown = 0;
  for (const auto* c : f.cases) {
    const std::string& err = c->stderr_text;
    if (err.empty() || shown++ == kStderrPerFinding) continue;
    log << workflow_command(
               "group", {},
               "stderr of " + report::case_label(f.op, f.dtype) + " (seed " + std::to_string(c->seed) + ")")
        << "\n";
    const std::string token = random_token();
    log << "::stop-commands::" << token << "\n";
    log << err;
    if (!err.ends_with("\n")) log << "\n";
    log << "::" << token << "::\n";
    log << "::endgroup::\n";
  }
}

Expected<void> append_file(const std::filesystem::path& path, const char* variable, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (out) out << text;
  if (!out || !out.flush()) {
    return fail(ErrorKind::io, std::string(variable) + "=" + path.string() + ": cannot append (" +
                                   std::strerror(errno) +
                                   "); the runner should create this file, so check the "
                                   "variable is not overridden in the workflow");
  }
  return {};
}

}  // namespace

long long failing_cases(const result::ResultDocument& result) {
  long long count = 0;
  for (const auto& op : result.ops) count += op.failed + op.errors;
  return count;
}

long long not_run_ops(const result::ResultDocument& result) {
  long long count = 0;
  for (const auto& op : result.ops) count += op.status() == result::OpStatus::not_run ? 1 : 0;
  return count;
}

void write_annotations(const result::ResultDocument& result, const Environment& env, std::ostream& log,
                       std::size_t max_annotations) {
  auto findings = report::collect_findings(result, env.workspace, env.project_root);
  for (std::size_t i = 0; i < findings.size() && i < max_annotations; ++i) {
    const auto& f = findings[i];
    Properties properties;
    // A path outside the checkout cannot be annotated; the message still names it.
    if (f.location.known() && !f.location.path.starts_with("/")) {
      properties.emplace_back("file", f.location.path);
      if (f.location.line > 0) properties.emplace_back("line", std::to_string(f.location.line));
    }
    properties.emplace_back(
        "title", "gpuemu " + report::case_label(f.op, f.dtype) + ": " + std::string(f.kind->title));
    // An op not run under --allow-partial does not fail the gate: a warning, not an error.
    const bool allowed = f.not_run && result.partial_allowed();
    log << workflow_command(allowed ? "warning" : "error", properties, annotation_message(f)) << "\n";
  }
  if (findings.size() > max_annotations) {
    std::size_t rest = findings.size() - max_annotations;
    log << workflow_command("notice", {{"title", "gpuemu"}},
                            std::to_string(rest) + " more failing (op, dtype) pair" + (rest == 1 ? "" : "s") +
                                " not annotated (GitHub shows " + std::to_string(max_annotations) +
                                " per step); see the job summary or result.json")
        << "\n";
  }
  // Warnings (warn_threshold, skipped artifact checks) have their own per-step limit on GitHub.
  for (std::size_t i = 0; i < result.warnings.size() && i < max_annotations; ++i) {
    log << workflow_command("warning", {{"title", "gpuemu warning"}}, result.warnings[i]) << "\n";
  }
  for (std::size_t i = 0; i < findings.size() && i < max_annotations; ++i)
    echo_script_output(findings[i], log);
}

Expected<void> append_summary(const result::ResultDocument& result, const Environment& env) {
  if (env.step_summary.empty()) return {};
  std::error_code ec;
  auto existing =
      std::filesystem::exists(env.step_summary, ec) ? std::filesystem::file_size(env.step_summary, ec) : 0;
  if (ec) existing = 0;
  // The 1 MiB limit is per step, so earlier writes to the same file count against it.
  report::RenderOptions options;
  options.workspace = env.workspace;
  options.project_root = env.project_root;
  options.markdown_limit = existing + 1 < report::kSummaryLimit ? report::kSummaryLimit - existing - 1 : 0;
  std::string markdown = TRY(report::write_markdown(result, options));
  if (markdown.empty()) return {};
  return append_file(env.step_summary, "GITHUB_STEP_SUMMARY", (existing > 0 ? "\n" : "") + markdown);
}

Expected<void> write_outputs(const result::ResultDocument& result, const Environment& env,
                             const std::string& result_path) {
  if (env.output.empty()) return {};
  std::string relative = result_path.empty() ? "" : report::repo_relative(result_path, env.workspace);
  const std::pair<const char*, std::string> outputs[] = {
      {"passed", result.passed ? "true" : "false"},
      {"failed", std::to_string(failing_cases(result))},
      {"not_run", std::to_string(not_run_ops(result))},
      {"result", relative},
  };
  std::string text;
  for (const auto& [name, value] : outputs) {
    // A fresh random delimiter per value: no value can end the heredoc early.
    std::string delimiter;
    do delimiter = "gpuemu_" + random_token();
    while (value.find(delimiter) != std::string::npos);
    text += std::string(name) + "<<" + delimiter + "\n" + value + "\n" + delimiter + "\n";
  }
  return append_file(env.output, "GITHUB_OUTPUT", text);
}

Expected<void> publish(const result::ResultDocument& result, const Environment& env, std::ostream& log,
                       const PublishOptions& options) {
  write_annotations(result, env, log, options.max_annotations);
  TRY(append_summary(result, env));
  TRY(write_outputs(result, env, options.result_path));
  return {};
}

}  // namespace gpuemu::github
