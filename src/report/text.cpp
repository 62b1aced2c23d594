// Plain-text renderer (see text.hpp). Reads only the result document, so `report render`
// gives the same text offline as the live run printed.
#include "report/text.hpp"

#include <fmt/format.h>

#include "report/result_document.hpp"
#include "report/run_facts.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::report {

namespace keys = util::result_keys;
namespace {

std::string number(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return fmt::format("{:.4g}", v.get<double>());
  return "-";
}

std::string shapes_text(const nlohmann::json& shapes) {
  std::string out;
  for (const auto& [name, shape] : shapes.items()) {
    std::string dims;
    for (const auto& d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d.get<long long>());
    out += (out.empty() ? "" : " ") + name + "[" + dims + "]";
  }
  return out;
}

}  // namespace

// The ci section: regressions against the baseline and the kernel lint, one line each.
static std::string ci_text(const nlohmann::json& result) {
  std::string out;
  const auto ci = result.value("ci", nlohmann::json());
  if (!ci.is_object()) return out;
  if (const auto baseline = ci.value("baseline", nlohmann::json()); baseline.is_object()) {
    const auto regressions = baseline.value("regressions", nlohmann::json::array());
    out += fmt::format("baseline {}: {} regression(s)\n", baseline.value("tag_or_source", ""),
                       regressions.size());
    for (const auto& r : regressions) {
      out += fmt::format("  REGRESSION {} [{}]: {}\n", r.value("op", ""), r.value("dtype", ""),
                         r.value("reason", ""));
    }
    for (const auto& w : baseline.value("warnings", nlohmann::json::array())) {
      out += "  warning: " + (w.is_string() ? w.get<std::string>() : w.dump()) + "\n";
    }
  }
  if (const auto lint = ci.value("lint", nlohmann::json()); lint.is_object()) {
    for (const auto& k : lint.value("kernels", nlohmann::json::array())) {
      const auto violations = k.value("violations", nlohmann::json::array());
      out += fmt::format("{} lint {}: {} violation(s)\n", violations.empty() ? "PASS" : "FAIL",
                         k.value("name", ""), violations.size());
      for (const auto& v : violations) out += "  - " + v.value("message", "") + "\n";
      if (!violations.empty()) out += "    replay: gpuemu lint --kernel " + k.value("name", "") + "\n";
    }
  }
  return out;
}

std::string render_text(const nlohmann::json& result, const TextOptions& options) {
  std::string out;
  int failing_ops = 0;
  const auto& ops = result.value("ops", nlohmann::json::array());
  int not_run_ops = 0;
  for (const auto& op : ops) {
    const int failed = op.value("failed", 0);
    const int errors = op.value("errors", 0);
    const std::string status = op_status(op);
    if (status == "not_run") {
      // No case ran: nothing was checked, so this is never shown as a pass.
      ++not_run_ops;
      out += fmt::format("NOT RUN {}: 0 cases (the run stopped before any case of it ran)\n",
                         op.value("op", ""));
      continue;
    }
    const bool ok = status == "passed";
    failing_ops += ok ? 0 : 1;
    out += fmt::format("{} {}: {} cases, {} passed, {} failed, {} errors\n", ok ? "PASS" : "FAIL",
                       op.value("op", ""), op.value("total", 0), op.value("passed", 0), failed, errors);
    if (const std::string ran = runtime_phrase(op.value("runtime", nlohmann::json())); !ran.empty()) {
      out += "     ran: " + ran + "\n";
    }
    if (const std::string time = timing_phrase(op.value("timing", nlohmann::json())); !time.empty()) {
      out += "     time: " + time + "\n";
    }
    for (const auto& d : op.value("dtypes", nlohmann::json::array())) {
      if (d.value("total", 0) == 0) continue;
      out += fmt::format(
          "     {:<9} {:>4} cases  max_abs {}  max_rel {}  max_ulp {}  (atol {:g}, rtol {:g})\n",
          d.value("dtype", ""), d.value("total", 0), number(d[keys::kMaxAbs]), number(d[keys::kMaxRel]),
          number(d[keys::kMaxUlp]), d.value(keys::kAtol, 0.0), d.value(keys::kRtol, 0.0));
    }
    int shown = 0;
    const auto& failures = op.value("failures", nlohmann::json::array());
    for (const auto& f : failures) {
      if (shown++ >= options.max_failures_per_op) break;
      out += fmt::format("  - {} seed {} {} {} {} {}\n", f.value("kind", ""), f.value("seed", ""),
                         f.value("dtype", ""), f.value("layout", ""), f.value("distribution", ""),
                         shapes_text(f.value("shapes", nlohmann::json::object())));
      out += "    " + f.value("message", "") + "\n";
      const std::string stderr_text = f.value("stderr", "");
      if (!stderr_text.empty()) {
        const auto last_line_start =
            stderr_text.find_last_of('\n', stderr_text.size() >= 2 ? stderr_text.size() - 2 : 0);
        out += "    stderr: " +
               stderr_text.substr(last_line_start == std::string::npos ? 0 : last_line_start + 1) +
               (stderr_text.ends_with('\n') ? "" : "\n");
      }
      out += "    replay: " + f.value("replay", "") + "\n";
    }
    if (static_cast<int>(failures.size()) > options.max_failures_per_op) {
      out += fmt::format("  ... and {} more failures (use --format json for all)\n",
                         failures.size() - options.max_failures_per_op);
    }
  }
  for (const auto& c : result.value("cut", nlohmann::json::array())) {
    out += fmt::format("CUT {} case {} seed {}: {}\n", c.value("op", ""), c.value("case", 0),
                       c.value("seed", ""), c.value("message", ""));
  }
  out += ci_text(result);
  if (const std::string time = timing_phrase(result.value("timing", nlohmann::json())); !time.empty()) {
    out += "time in cases: " + time + "\n";
  }
  std::string partial;
  if (result.value("partial", false)) {
    partial = partial_allowed(result) ? " (partial: stopped early, accepted by --allow-partial)"
                                      : " (partial: stopped early)";
  }
  out += fmt::format("{}: {} of {} ops failed{}, master seed {}{}\n",
                     result.value("passed", false) ? "passed" : "FAILED", failing_ops, ops.size(),
                     not_run_ops > 0 ? fmt::format(", {} not run", not_run_ops) : std::string(),
                     result.value("seed", ""), partial);
  return out;
}

}  // namespace gpuemu::report
