// Markdown summary from result.json, for a CI job page ($GITHUB_STEP_SUMMARY): a pass/fail table
// per op and dtype, regressions, and the worst failures with replay commands. GitHub rejects a
// summary of 1 MiB or more, so output is built block by block under a hard byte limit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "report/findings.hpp"
#include "report/run_facts.hpp"
#include "report/value_text.hpp"
#include "report/writer.hpp"
#include "util/text_escape.hpp"

namespace gpuemu::report {

namespace {

// Failures shown in full; the rest are in result.json and the other reports.
constexpr std::size_t kDetailedFailures = 50;
// Other failing cases of an (op, dtype) listed by seed under its worst one.
constexpr std::size_t kOtherCases = 5;
// Bytes of a script's stderr shown per failure.
constexpr std::size_t kStderrTail = 4096;

// Appends whole blocks while they fit, keeping room for the closing note; once one does not fit,
// later blocks are only counted, so a truncated summary ends cleanly instead of mid-table.
class Budget {
 public:
  explicit Budget(std::size_t limit) : limit_(limit) {}

  void add(std::string_view block) {
    if (!truncated_ && out_.size() + block.size() + kNoteReserve < limit_) {
      out_ += block;
    } else {
      truncated_ = true;
      ++omitted_;
    }
  }

  std::string finish() && {
    if (truncated_) {
      std::string note = "\n> **Truncated:** " + std::to_string(omitted_) +
                         " more blocks did not fit under the summary size limit; the full results are in "
                         "result.json, junit.xml and gpuemu.sarif.\n";
      if (out_.size() + note.size() < limit_) out_ += note;
    }
    return std::move(out_);
  }

 private:
  static constexpr std::size_t kNoteReserve = 256;
  std::size_t limit_;
  std::string out_;
  bool truncated_ = false;
  std::size_t omitted_ = 0;
};

// A code span that survives backticks and pipes in `in` (GitHub reads "\|" as "|" inside tables).
std::string code(std::string_view in) {
  std::string body;
  for (char c : in) {
    if (c == '\n' || c == '\r')
      body += ' ';
    else if (c == '|')
      body += "\\|";
    else
      body += c;
  }
  if (body.empty()) return "";
  if (body.find('`') == std::string::npos) return "`" + body + "`";
  return "`` " + body + " ``";
}

std::string compact(const nlohmann::json& value) {
  if (value.is_object()) {
    std::string out;
    for (const auto& [key, v] : value.items()) {
      out += (out.empty() ? "" : ", ") + key + " " + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    return out;
  }
  return value.is_null() ? "-" : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void header(Budget& budget, const result::ResultDocument& result, int checks, int failing, int not_run) {
  const std::string not_run_text =
      not_run > 0 ? ", " + std::to_string(not_run) + " op" + (not_run == 1 ? "" : "s") + " not run" : "";
  std::string title =
      failing == 0 ? "## ✅ gpuemu: all " + std::to_string(checks) + " checks passed" + not_run_text + "\n\n"
                   : "## ❌ gpuemu: " + std::to_string(failing) + " of " + std::to_string(checks) +
                         " checks failed" + not_run_text + "\n\n";
  if (failing == 0 && !result.passed) {
    title = not_run > 0 || result.partial ? "## ❌ gpuemu: failed: partial run" + not_run_text + "\n\n"
                                          : "## ❌ gpuemu: failed (see regressions and kernel lint)\n\n";
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f s", result.duration_secs);
  std::string line = "Project " + code(result.project) + " · `gpuemu " +
                     util::markdown_inline(result.command) + "` · seed " + code(std::to_string(result.seed)) +
                     " · config " + code(result.config_digest.substr(0, 12)) + " · " + seconds +
                     " · gpuemu " + util::markdown_inline(result.tool.version) + "\n\n";
  budget.add(title + line);
  if (result.partial) {
    budget.add(
        std::string(
            "> ⚠️ **Partial run:** it stopped at its time budget or on the first failure, so not every "
            "case ran") +
        (result.partial_allowed() ? "; accepted by `--allow-partial`.\n\n"
                                  : "; a partial run does not pass.\n\n"));
  }
}

void table(Budget& budget, const result::ResultDocument& result) {
  budget.add(
      "| Op | Dtype | Result | Cases | Failed | Errors | Max abs | Max rel | Max ULP | Tolerance used |\n"
      "|:---|:---|:---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& op : result.ops) {
    const bool op_not_run = op.status() == result::OpStatus::not_run;
    for (const auto& d : op.dtypes) {
      const auto failed = d.failed, errors = d.errors, total = d.total;
      std::string verdict = failed + errors > 0 ? "❌ fail"
                            : op_not_run        ? "⛔ NOT RUN"
                            : total == 0        ? "⏭️ not run"
                                                : "✅ pass";
      budget.add("| " + util::markdown_inline(op.op) + " | " + util::markdown_inline(d.dtype) + " | " +
                 verdict + " | " + std::to_string(total) + " | " + std::to_string(failed) + " | " +
                 std::to_string(errors) + " | " + format_number(d.figures.max_abs) + " | " +
                 format_number(d.figures.max_rel) + " | " + format_number(d.figures.max_ulp) + " | " +
                 format_number(d.figures.tolerance_used) + " |\n");
    }
  }
  budget.add("\n");
}

// Ops of which no case ran and cases cut at the time budget: what the run did not check.
void not_run_section(Budget& budget, const result::ResultDocument& result) {
  std::string block;
  for (const auto& op : result.ops) {
    if (op.status() != result::OpStatus::not_run) continue;
    block += "- " + code(op.op) + ": **NOT RUN**, no case ran before the time budget ran out\n";
  }
  for (const auto& c : result.cut.value_or(std::vector<result::CutCase>{})) {
    block += "- " + code(c.op) + " case " + std::to_string(c.index) + " (seed " +
             code(std::to_string(c.seed)) + "): cut: " + util::markdown_inline(c.message) + "\n";
  }
  if (!block.empty()) budget.add("### Not run\n\n" + block + "\n");
}

// What ran each op and where its time went, so a green interpreter run is never read as a GPU
// run and a slow gate shows whether the kernel, the reference or gpuemu is slow.
void ran_and_time(Budget& budget, const result::ResultDocument& result) {
  std::string rows;
  for (const auto& op : result.ops) {
    const std::string ran = runtime_phrase(op.runtime.value_or(nlohmann::json()));
    const auto& timing = op.timing;
    if (ran.empty() && !timing) continue;
    auto cell = [&](double part) {
      if (!timing) return std::string("-");
      const double wall = timing->wall_secs;
      return format_duration(part) +
             (wall > 0 ? " (" + std::to_string(static_cast<int>(100.0 * part / wall + 0.5)) + "%)" : "");
    };
    const result::Timing t = timing.value_or(result::Timing{});
    rows += "| " + util::markdown_inline(op.op) + " | " + (ran.empty() ? "-" : util::markdown_inline(ran)) +
            " | " + (timing ? format_duration(t.wall_secs) : "-") + " | " + cell(t.op_secs) + " | " +
            cell(t.reference_secs) + " | " + (timing ? format_duration(t.overlap_secs) : "-") + " | " +
            cell(t.gpuemu_secs()) + " |\n";
  }
  if (rows.empty()) return;
  budget.add(
      "### What ran, and where the time went\n\n"
      "| Op | Ran | Wall | In the op | In the reference | Both at once | gpuemu |\n"
      "|:---|:---|---:|---:|---:|---:|---:|\n" +
      rows + "\n");
}

void regressions(Budget& budget, const result::ResultDocument& result) {
  if (!result.ci || !result.ci->baseline) return;
  const auto& baseline = *result.ci->baseline;
  const auto& list = baseline.regressions;
  const std::string& source = baseline.tag_or_source;
  budget.add("### Regressions against the baseline" + (source.empty() ? "" : " " + code(source)) + "\n\n");
  if (list.empty())
    budget.add("None.\n\n");
  else
    budget.add("| Op | Dtype | Reason | Before | After |\n|:---|:---|:---|:---|:---|\n");
  for (const auto& r : list) {
    budget.add("| " + util::markdown_inline(r.op) + " | " + util::markdown_inline(r.dtype) + " | " +
               util::markdown_inline(r.reason) + " | " + util::markdown_inline(compact(r.before)) + " | " +
               util::markdown_inline(compact(r.after)) + " |\n");
  }
  if (!list.empty()) budget.add("\n");
  for (const auto& warning : baseline.warnings)
    budget.add("- ⚠️ " + util::markdown_inline(warning) + "\n");
  budget.add("\n");
}

// A metric's value for the lint table: "-" when the kernel's tools could not measure it.
std::string metric_cell(const nlohmann::json& metrics, const char* name) {
  if (!metrics.is_object() || !metrics.contains(name)) return "-";
  const auto& entry = metrics[name];
  const auto& value = entry.is_object() && entry.contains("value") ? entry["value"] : entry;
  return util::markdown_inline(value.is_string() ? value.get<std::string>() : value.dump());
}

// ci.lint keeps the JSON of `gpuemu lint` (its types belong to `artifact`).
void kernel_lint(Budget& budget, const result::ResultDocument& result) {
  if (!result.ci || !result.ci->lint.is_object()) return;
  const auto& lint = result.ci->lint;
  budget.add(
      "### Kernel lint\n\n| Kernel | Result | Registers | Spills | Local memory | Violations |\n"
      "|:---|:---|---:|---:|---:|:---|\n");
  for (const auto& k : lint["kernels"]) {
    std::string violations;
    for (const auto& v : k["violations"]) {
      violations += (violations.empty() ? "" : "<br>") + util::markdown_inline(v.value("message", ""));
    }
    const auto metrics = k.value("metrics", nlohmann::json());
    const bool skipped = k.contains("skipped");
    if (skipped) violations = util::markdown_inline(k.value("skipped", ""));
    budget.add("| " + util::markdown_inline(k["name"].get<std::string>()) + " | " +
               (skipped                   ? "⚠️ skipped"
                : k["passed"].get<bool>() ? "✅ pass"
                                          : "❌ fail") +
               " | " + metric_cell(metrics, "registers") + " | " + metric_cell(metrics, "spills") + " | " +
               metric_cell(metrics, "local_memory_bytes") + " | " + (violations.empty() ? "-" : violations) +
               " |\n");
  }
  budget.add("\nRe-run one: `gpuemu lint --kernel NAME`\n\n");
}

// What passed but deserves a look (result.json "warnings"): never a failure, always shown.
void warnings(Budget& budget, const result::ResultDocument& result) {
  if (result.warnings.empty()) return;
  budget.add("### Warnings\n\n");
  for (const auto& warning : result.warnings) budget.add("- ⚠️ " + util::markdown_inline(warning) + "\n");
  budget.add("\n");
}

std::string failure_block(const Finding& f) {
  const auto& w = *f.worst;
  std::string block = "#### ❌ " + util::markdown_inline(case_label(f.op, f.dtype)) + ": " +
                      std::string(f.kind->title) + "\n\n";
  std::string facts;
  if (f.location.known()) facts += code(format_location(f.location)) + " · ";
  facts += std::to_string(f.failing_cases) + " of " + std::to_string(f.total_cases) +
           " cases failed · seed " + code(std::to_string(w.seed));
  // A version-1 reader tolerates a failure without layout or distribution: then they are not shown.
  if (!w.layout.empty()) facts += " · layout " + util::markdown_inline(w.layout);
  if (!w.distribution.empty()) facts += " · distribution " + util::markdown_inline(w.distribution);
  facts += " · shapes " + code(format_shapes(w.shapes));
  block += facts + "\n\n> " + util::markdown_inline(w.message) + "\n\n";
  if (compares_values(w.kind)) {
    block += "Max abs " + format_number(w.figures.max_abs) + " · max rel " +
             format_number(w.figures.max_rel) + " · max ULP " + format_number(w.figures.max_ulp) +
             " · tolerance used " + format_number(w.figures.tolerance_used) + " (atol " +
             format_number(w.atol) + ", rtol " + format_number(w.rtol) + ")\n\n";
  }
  if (!w.worst.empty()) {
    block += "| Output | Index | Actual | Expected | Abs err | Rel err |\n|:---|:---|---:|---:|---:|---:|\n";
    for (const auto& e : w.worst) {
      block += "| " + util::markdown_inline(e.output.empty() ? "out" : e.output) + " | " +
               code(format_index(e.index)) + " | " + format_number(e.actual) + " | " +
               format_number(e.expected) + " | " + format_number(e.abs_err) + " | " +
               format_number(e.rel_err) + " |\n";
    }
    block += "\n";
  }
  block += "Replay:\n\n" + util::markdown_fenced("sh", f.replay()) + "\n";
  std::string others;
  std::size_t listed = 0;
  for (const auto* c : f.cases) {
    if (c == f.worst) continue;
    if (listed++ == kOtherCases) {
      others += "- … and " + std::to_string(f.cases.size() - 1 - kOtherCases) + " more\n";
      break;
    }
    others += "- seed " + code(std::to_string(c->seed)) + " (" + util::markdown_inline(c->kind) +
              "): " + code(c->replay) + "\n";
  }
  if (!others.empty()) block += "Other failing cases:\n\n" + others + "\n";
  if (auto err = w.stderr_text; !err.empty()) {
    if (err.size() > kStderrTail) {
      // Keep the end, where the error usually is, starting on a UTF-8 character boundary.
      std::size_t start = err.size() - kStderrTail;
      while (start < err.size() && (static_cast<unsigned char>(err[start]) & 0xC0) == 0x80) ++start;
      err = "[... " + std::to_string(start) + " bytes cut ...]\n" + err.substr(start);
    }
    block +=
        "<details><summary>stderr</summary>\n\n" + util::markdown_fenced("text", err) + "\n</details>\n\n";
  }
  return block;
}

}  // namespace

Expected<std::string> write_markdown(const result::ResultDocument& result, const RenderOptions& options) {
  // A check is an (op, dtype) of which a case ran; what never ran is counted apart, never as passed.
  int checks = 0, failing = 0, not_run = 0;
  for (const auto& op : result.ops) {
    if (op.status() == result::OpStatus::not_run) ++not_run;
    for (const auto& d : op.dtypes) {
      if (d.total == 0) continue;
      ++checks;
      if (d.failed + d.errors > 0) ++failing;
    }
  }
  Budget budget(options.markdown_limit);
  header(budget, result, checks, failing, not_run);
  table(budget, result);
  not_run_section(budget, result);
  ran_and_time(budget, result);
  regressions(budget, result);
  kernel_lint(budget, result);
  warnings(budget, result);
  auto findings = collect_findings(result, options.workspace, options.project_root);
  std::erase_if(findings, [](const Finding& f) { return f.worst == nullptr; });
  if (!findings.empty()) budget.add("### Failures, worst first\n\n");
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (i == kDetailedFailures) {
      budget.add("… and " + std::to_string(findings.size() - i) +
                 " more failing (op, dtype) pairs; see result.json or the SARIF report.\n");
      break;
    }
    budget.add(failure_block(findings[i]));
  }
  return std::move(budget).finish();
}

}  // namespace gpuemu::report
