// Baseline documents and regression detection (see baseline_document.hpp). The document carries what
// a later run needs to judge itself: totals, max errors and tolerances per (op, dtype).
#include "engine/baseline_document.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "util/result_keys.hpp"
#include "util/time.hpp"

namespace gpuemu::engine {

namespace keys = util::result_keys;
namespace {

double number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const auto& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
    if (s == "NaN") return NAN;
  }
  return 0;
}

// Baselines come from files and remote stores: each field is checked for its JSON type (counts
// also for their range) so a wrong document is an error naming the field, never a json exception.
std::unexpected<Error> wrong_field(const std::string& source, std::string_view where, std::string_view key,
                                   std::string_view want) {
  return fail(ErrorKind::parse, fmt::format("{}: \"{}{}\" must be {}; re-export the baseline with "
                                            "'gpuemu baseline export TAG FILE'",
                                            source, where, key, want));
}

Expected<std::string> string_field(const nlohmann::json& j, const char* key, const std::string& source,
                                   std::string_view where) {
  const auto it = j.find(key);
  if (it == j.end()) return std::string();
  if (!it->is_string()) return wrong_field(source, where, key, "a string");
  return it->get<std::string>();
}

Expected<int> count_field(const nlohmann::json& j, const char* key, const std::string& source,
                          std::string_view where) {
  const auto it = j.find(key);
  if (it == j.end()) return 0;
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() > std::numeric_limits<int>::max()) {
    return wrong_field(source, where, key,
                       fmt::format("a whole number from 0 to {}", std::numeric_limits<int>::max()));
  }
  return static_cast<int>(it->get<std::uint64_t>());
}

nlohmann::json entry_json(const BaselineEntry& e) {
  nlohmann::json entry = result::dtype_summary_to_json(e.summary);
  entry["op"] = e.op;
  return entry;
}

bool all_passed(const result::DtypeSummary& d) {
  return d.total > 0 && d.failed == 0 && d.errors == 0;
}

// Error growth of a still-passing (op, dtype), judged against its tolerance budget (docs/ci.md):
// the worst error must have grown by more than max_error_growth AND its share of the tolerance by
// more than regression_margin. A ratio alone fails correct kernels when only the seed changes
// (1e-7 -> 4e-7 is 4x, yet 4% of the budget); the budget share moves little between seeds.
bool grew_past_budget(const result::DtypeSummary& before, const result::DtypeSummary& now,
                      const config::PolicyConfig& policies) {
  const bool ratio =
      before.max_abs > 0 ? now.max_abs > before.max_abs * policies.max_error_growth : now.max_abs > 0;
  return ratio && now.tolerance_used - before.tolerance_used > policies.regression_margin;
}

}  // namespace

std::vector<BaselineEntry> baseline_entries(const result::RunResult& result) {
  std::vector<BaselineEntry> entries;
  for (const auto& op : result.ops) {
    for (const auto& d : op.dtypes) {
      if (d.total > 0) entries.push_back({op.op, d});
    }
  }
  return entries;
}

nlohmann::json make_baseline(const std::string& tag, const std::string& config_digest,
                             std::uint64_t master_seed, const std::vector<BaselineEntry>& entries) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) list.push_back(entry_json(e));
  const auto now = util::now_millis() / 1000;
  return {{"schema_version", kBaselineSchemaVersion},
          {"kind", "gpuemu-baseline"},
          {"tag", tag},
          {"created_unix", now},
          {"config_digest", config_digest},
          {"seed", std::to_string(master_seed)},
          {"tool", {{"name", "gpuemu"}, {"version", GPUEMU_VERSION}}},
          {"entries", list}};
}

Expected<std::vector<BaselineEntry>> parse_baseline(const nlohmann::json& document,
                                                    const std::string& source) {
  const auto kind = document.is_object() ? document.find("kind") : document.end();
  if (!document.is_object() || kind == document.end() || *kind != "gpuemu-baseline") {
    return fail(ErrorKind::parse,
                source +
                    " is not a gpuemu baseline document (no \"kind\": \"gpuemu-baseline\"); "
                    "create one with 'gpuemu baseline export TAG FILE'");
  }
  const int version = TRY(count_field(document, "schema_version", source, ""));
  if (version != kBaselineSchemaVersion) {
    return fail(ErrorKind::parse,
                fmt::format("{} has baseline schema_version {}, this gpuemu reads {}; re-export it "
                            "with this version",
                            source, version, kBaselineSchemaVersion));
  }
  const auto list = document.find("entries");
  if (list != document.end() && !list->is_array()) return wrong_field(source, "", "entries", "an array");
  std::vector<BaselineEntry> entries;
  for (std::size_t i = 0; list != document.end() && i < list->size(); ++i) {
    const nlohmann::json& e = (*list)[i];
    const std::string where = fmt::format("entries[{}].", i);
    if (!e.is_object()) return wrong_field(source, "", where.substr(0, where.size() - 1), "an object");
    BaselineEntry entry;
    entry.op = TRY(string_field(e, "op", source, where));
    auto dtype = tensor::parse_dtype(TRY(string_field(e, "dtype", source, where)));
    if (entry.op.empty() || !dtype) {
      return fail(ErrorKind::parse, source + ": a baseline entry lacks a valid \"op\" or \"dtype\"");
    }
    auto& d = entry.summary;
    d.dtype = *dtype;
    d.total = TRY(count_field(e, "total", source, where));
    d.passed = TRY(count_field(e, "passed", source, where));
    d.failed = TRY(count_field(e, "failed", source, where));
    d.errors = TRY(count_field(e, "errors", source, where));
    d.max_abs = number(e, keys::kMaxAbs);
    d.max_rel = number(e, keys::kMaxRel);
    d.max_ulp = number(e, keys::kMaxUlp);
    d.tolerance_used = number(e, keys::kToleranceUsed);
    d.tolerance = {number(e, keys::kAtol), number(e, keys::kRtol)};
    entries.push_back(std::move(entry));
  }
  return entries;
}

BaselineComparison compare_with_baseline(const std::vector<BaselineEntry>& baseline,
                                         const std::vector<BaselineEntry>& current,
                                         const config::PolicyConfig& policies) {
  BaselineComparison out;
  std::map<std::pair<std::string, tensor::DType>, const BaselineEntry*> before;
  for (const auto& e : baseline) before[{e.op, e.summary.dtype}] = &e;
  for (const auto& now : current) {
    const std::string dtype(tensor::dtype_name(now.summary.dtype));
    const auto& d = now.summary;
    if (all_passed(d) && d.tolerance_used > policies.warn_threshold) {
      out.warnings.push_back(
          fmt::format("{} [{}] passed but used {:.0f}% of its tolerance (warn_threshold {:.0f}%)", now.op,
                      dtype, 100 * d.tolerance_used, 100 * policies.warn_threshold));
    }
    auto it = before.find({now.op, now.summary.dtype});
    if (it == before.end()) continue;
    const auto& b = it->second->summary;
    if (all_passed(b) && !all_passed(d)) {
      out.regressions.push_back(
          {now.op, dtype,
           fmt::format("passed in the baseline, now {} failed and {} errors of {} cases", d.failed, d.errors,
                       d.total),
           entry_json(*it->second), entry_json(now)});
    } else if (all_passed(d) && all_passed(b) && grew_past_budget(b, d, policies)) {
      out.regressions.push_back(
          {now.op, dtype,
           fmt::format(
               "max_abs grew {} ({:.3g} -> {:.3g}) and now uses {:.0f}% of the tolerance, up from {:.0f}%: "
               "more than max_error_growth {:g} and regression_margin {:.0f}%",
               b.max_abs > 0 ? fmt::format("{:.3g}x", d.max_abs / b.max_abs) : std::string("from 0"),
               b.max_abs, d.max_abs, 100 * d.tolerance_used, 100 * b.tolerance_used,
               policies.max_error_growth, 100 * policies.regression_margin),
           entry_json(*it->second), entry_json(now)});
    }
  }
  return out;
}

result::BaselineSection BaselineComparison::to_section(const std::string& source) const {
  return {.tag_or_source = source, .regressions = regressions, .warnings = warnings};
}

}  // namespace gpuemu::engine
