// Plain-text renderer (see text.hpp). Reads only the result document, so `report render`
// gives the same text offline as the live run printed.
#include "report/text.hpp"

#include <fmt/format.h>

#include "report/run_facts.hpp"

namespace gpuemu::report {

namespace {

// Four significant digits; non-finite values as result.json spells them.
std::string number(double v) {
  const auto spelled = result::json_number(v);
  return spelled.is_string() ? spelled.get<std::string>() : fmt::format("{:.4g}", v);
}

std::string shapes_text(const std::map<std::string, std::vector<std::int64_t>>& shapes) {
  std::string out;
  for (const auto& [name, shape] : shapes) {
    std::string dims;
    for (const auto d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    out += (out.empty() ? "" : " ") + name + "[" + dims + "]";
  }
  return out;
}

// The ci section: regressions against the baseline and the kernel lint, one line each.
std::string ci_text(const result::ResultDocument& result) {
  std::string out;
  if (!result.ci) return out;
  if (const auto& baseline = result.ci->baseline) {
    out +=
        fmt::format("baseline {}: {} regression(s)\n", baseline->tag_or_source, baseline->regressions.size());
    for (const auto& r : baseline->regressions) {
      out += fmt::format("  REGRESSION {} [{}]: {}\n", r.op, r.dtype, r.reason);
    }
    for (const auto& w : baseline->warnings) out += "  warning: " + w + "\n";
  }
  // ci.lint keeps the JSON of `gpuemu lint` (its types belong to `artifact`).
  if (const auto& lint = result.ci->lint; lint.is_object()) {
    for (const auto& k : lint.value("kernels", nlohmann::json::array())) {
      const auto violations = k.value("violations", nlohmann::json::array());
      if (k.contains("skipped")) {
        out += fmt::format("SKIP lint {}: {}\n", k.value("name", ""), k.value("skipped", ""));
        continue;
      }
      out += fmt::format("{} lint {}: {} violation(s)\n", violations.empty() ? "PASS" : "FAIL",
                         k.value("name", ""), violations.size());
      for (const auto& v : violations) out += "  - " + v.value("message", "") + "\n";
      if (!violations.empty()) out += "    replay: gpuemu lint --kernel " + k.value("name", "") + "\n";
    }
  }
  return out;
}

void failure_text(std::string& out, const result::FailureEntry& f) {
  out += fmt::format("  - {} seed {} {} {} {} {}\n", f.kind, f.seed, f.dtype, f.layout, f.distribution,
                     shapes_text(f.shapes));
  out += "    " + f.message + "\n";
  const std::string& stderr_text = f.stderr_text;
  if (!stderr_text.empty()) {
    const auto last_line_start =
        stderr_text.find_last_of('\n', stderr_text.size() >= 2 ? stderr_text.size() - 2 : 0);
    out +=
        "    stderr: " + stderr_text.substr(last_line_start == std::string::npos ? 0 : last_line_start + 1) +
        (stderr_text.ends_with('\n') ? "" : "\n");
  }
  out += "    replay: " + f.replay + "\n";
}

}  // namespace

std::string render_text(const result::ResultDocument& result, const TextOptions& options) {
  std::string out;
  int failing_ops = 0;
  int not_run_ops = 0;
  for (const auto& op : result.ops) {
    const auto status = op.status();
    if (status == result::OpStatus::not_run) {
      // No case ran: nothing was checked, so this is never shown as a pass.
      ++not_run_ops;
      out += fmt::format("NOT RUN {}: 0 cases (the run stopped before any case of it ran)\n", op.op);
      continue;
    }
    const bool ok = status == result::OpStatus::passed;
    failing_ops += ok ? 0 : 1;
    out += fmt::format("{} {}: {} cases, {} passed, {} failed, {} errors\n", ok ? "PASS" : "FAIL", op.op,
                       op.total, op.passed, op.failed, op.errors);
    if (const std::string ran = runtime_phrase(op.runtime.value_or(nlohmann::json())); !ran.empty()) {
      out += "     ran: " + ran + "\n";
    }
    if (const std::string time = timing_phrase(op.timing); !time.empty()) {
      out += "     time: " + time + "\n";
    }
    for (const auto& d : op.dtypes) {
      if (d.total == 0) continue;
      out +=
          fmt::format("     {:<9} {:>4} cases  max_abs {}  max_rel {}  max_ulp {}  (atol {:g}, rtol {:g})\n",
                      d.dtype, d.total, number(d.figures.max_abs), number(d.figures.max_rel),
                      number(d.figures.max_ulp), d.atol, d.rtol);
    }
    int shown = 0;
    for (const auto& f : op.failures) {
      if (shown++ >= options.max_failures_per_op) break;
      failure_text(out, f);
    }
    if (static_cast<int>(op.failures.size()) > options.max_failures_per_op) {
      out += fmt::format("  ... and {} more failures (use --format json for all)\n",
                         op.failures.size() - options.max_failures_per_op);
    }
  }
  for (const auto& c : result.cut.value_or(std::vector<result::CutCase>{})) {
    out += fmt::format("CUT {} case {} seed {}: {}\n", c.op, c.index, c.seed, c.message);
  }
  out += ci_text(result);
  for (const auto& warning : result.warnings) out += "warning: " + warning + "\n";
  if (const std::string time = timing_phrase(result.timing); !time.empty()) {
    out += "time in cases: " + time + "\n";
  }
  std::string partial;
  if (result.partial) {
    partial = result.partial_allowed() ? " (partial: stopped early, accepted by --allow-partial)"
                                       : " (partial: stopped early)";
  }
  out += fmt::format("{}: {} of {} ops failed{}, master seed {}{}\n", result.passed ? "passed" : "FAILED",
                     failing_ops, result.ops.size(),
                     not_run_ops > 0 ? fmt::format(", {} not run", not_run_ops) : std::string(), result.seed,
                     partial);
  return out;
}

}  // namespace gpuemu::report
