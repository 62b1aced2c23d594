// Baseline documents and regression detection (see baseline_document.hpp). The document carries what
// a later run needs to judge itself: totals, max errors and tolerances per (op, dtype).
#include "engine/baseline_document.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <map>

#include "result/field_reader.hpp"
#include "util/time.hpp"

namespace gpuemu::engine {

namespace {

// A baseline's words for the first wrong field: the file, the field's path, what it must be, and how
// to get a good file. Baselines come from files and remote stores, so every field is checked.
Error baseline_error(const std::string& source, const result::FieldProblem& problem) {
  std::string what = problem.what;
  if (problem.missing) {
    what = "is missing";
  } else if (problem.expected == result::FieldType::count) {
    what = fmt::format("must be a whole number from 0 to {}", std::numeric_limits<int>::max());
  } else if (problem.expected) {
    what = fmt::format("must be {}", result::field_type_name(*problem.expected));
  }
  return Error{ErrorKind::parse, fmt::format("{}: \"{}\" {}; re-export the baseline with "
                                             "'gpuemu baseline export TAG FILE'",
                                             source, problem.path, what)};
}

// A count of a DtypeSummary, which holds an int.
int summary_count(result::FieldReader& r, std::int64_t value, const std::string& where,
                  std::string_view key) {
  if (value > std::numeric_limits<int>::max()) {
    r.problem(fmt::format("{}.{}", where, key), "is too large", result::FieldType::count);
    return 0;
  }
  return static_cast<int>(value);
}

// entries[i]: an (op, dtype) entry of result.json (result::read_dtype_entry) with its "op" beside it.
BaselineEntry read_entry(result::FieldReader& r, const nlohmann::json& e, const std::string& where) {
  BaselineEntry entry;
  if (!e.is_object()) {
    r.problem(where, "should be an object", result::FieldType::object);
    return entry;
  }
  entry.op = r.text(e, where, "op");
  if (r.ok() && entry.op.empty()) r.problem(where + ".op", "is empty; it must name an op");
  const result::DtypeEntry read = result::read_dtype_entry(r, e, where);
  const auto dtype = tensor::parse_dtype(read.dtype);
  if (r.ok() && !dtype) {
    r.problem(where + ".dtype", fmt::format("is \"{}\", not a dtype name such as float32", read.dtype));
  }
  if (!r.ok()) return entry;
  auto& d = entry.summary;
  d.dtype = *dtype;
  d.total = summary_count(r, read.total, where, "total");
  d.passed = summary_count(r, read.passed, where, "passed");
  d.failed = summary_count(r, read.failed, where, "failed");
  d.errors = summary_count(r, read.errors, where, "errors");
  d.max_abs = read.figures.max_abs;
  d.max_rel = read.figures.max_rel;
  d.max_ulp = read.figures.max_ulp;
  d.tolerance_used = read.figures.tolerance_used;
  d.tolerance = {read.atol, read.rtol};
  return entry;
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
  result::FieldReader r;
  const std::int64_t version = r.count(document, "", "schema_version");
  if (r.ok() && version != kBaselineSchemaVersion) {
    return fail(ErrorKind::parse,
                fmt::format("{} has baseline schema_version {}, this gpuemu reads {}; re-export it "
                            "with this version",
                            source, version, kBaselineSchemaVersion));
  }
  std::vector<BaselineEntry> entries;
  if (const nlohmann::json* list = r.field(document, "", "entries", result::FieldType::array)) {
    for (std::size_t i = 0; i < list->size() && r.ok(); ++i) {
      entries.push_back(read_entry(r, (*list)[i], fmt::format("entries[{}]", i)));
    }
  }
  if (!r.ok()) return std::unexpected(baseline_error(source, r.first_problem()));
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
