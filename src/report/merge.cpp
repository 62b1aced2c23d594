// Merging shard results (see merge.hpp) over typed documents, written with result::to_json. Every
// ordering here is by a key, never by the order the shards were given in, so any permutation of the
// same shards merges to the same bytes.
#include "report/merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "util/result_keys.hpp"

namespace gpuemu::report {

namespace keys = util::result_keys;
namespace {

using result::ResultDocument;

struct Shard {
  const std::string* name;
  ResultDocument document;
};

// The worse of two statistics; NaN (a comparison that broke down) is the worst of all.
double worse_number(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return b > a ? b : a;
}

// "2/4" -> 2; nullopt when the shard is not named.
std::optional<std::pair<int, int>> shard_of(const ResultDocument& result) {
  if (!result.ci || !result.ci->shard) return std::nullopt;
  int index = 0, count = 0;
  char slash = 0;
  if (std::sscanf(result.ci->shard->c_str(), "%d%c%d", &index, &slash, &count) != 3 || slash != '/') {
    return std::nullopt;
  }
  return std::pair{index, count};
}

// The fields that say which run a document is from, as result.json spells them.
nlohmann::json identity(const ResultDocument& d, std::string_view key) {
  if (key == "tool") return {{"name", d.tool.name}, {"version", d.tool.version}};
  if (key == "command") return d.command;
  if (key == "seed") return std::to_string(d.seed);
  if (key == "config_digest") return d.config_digest;
  return d.project;
}

Expected<void> same_run(const Shard& first, const Shard& other) {
  // schema_version needs no check: the reader accepts only version 1.
  for (const auto* key : {"tool", "command", "seed", "config_digest", "project"}) {
    const auto mine = identity(first.document, key), theirs = identity(other.document, key);
    if (mine != theirs) {
      return fail(ErrorKind::usage, *other.name + ": " + key + " is " + theirs.dump() + " but " +
                                        *first.name + " has " + mine.dump() +
                                        "; merge only the shards of one run (same seed, config and gpuemu)");
    }
  }
  return {};
}

Expected<void> merge_dtype(result::DtypeEntry& into, const result::DtypeEntry& from,
                           const std::string& where) {
  for (const auto& [key, a, b] :
       {std::tuple{keys::kAtol, into.atol, from.atol}, std::tuple{keys::kRtol, into.rtol, from.rtol}}) {
    // Compared as written, so NaN equals NaN.
    const auto x = result::json_number(a), y = result::json_number(b);
    if (x != y) {
      return fail(ErrorKind::usage, where + ": the shards used different tolerances (" + key + " " +
                                        x.dump() + " vs " + y.dump() + "); merge only the shards of one run");
    }
  }
  into.total += from.total;
  into.passed += from.passed;
  into.failed += from.failed;
  into.errors += from.errors;
  into.figures.max_abs = worse_number(into.figures.max_abs, from.figures.max_abs);
  into.figures.max_rel = worse_number(into.figures.max_rel, from.figures.max_rel);
  into.figures.max_ulp = worse_number(into.figures.max_ulp, from.figures.max_ulp);
  into.figures.tolerance_used = worse_number(into.figures.tolerance_used, from.figures.tolerance_used);
  return {};
}

void add_timing(std::optional<result::Timing>& into, const std::optional<result::Timing>& from) {
  if (!from) return;
  if (into)
    *into += *from;
  else
    into = from;
}

Expected<void> merge_op(result::OpEntry& into, const result::OpEntry& from, const std::string& shard_name) {
  const std::string& name = into.op;
  if (into.source != from.source) {
    return fail(ErrorKind::usage, shard_name + ": op '" + name + "' has source " +
                                      nlohmann::json(from.source).dump() + " but another shard has " +
                                      nlohmann::json(into.source).dump() +
                                      "; merge only the shards of one run");
  }
  into.total += from.total;
  into.passed += from.passed;
  into.failed += from.failed;
  into.errors += from.errors;
  for (const auto& dtype : from.dtypes) {
    auto it = std::ranges::find(into.dtypes, dtype.dtype, &result::DtypeEntry::dtype);
    if (it == into.dtypes.end()) {
      into.dtypes.push_back(dtype);
    } else {
      TRY(merge_dtype(*it, dtype,
                      shard_name + ": op '" + name + "' dtype " + nlohmann::json(dtype.dtype).dump()));
    }
  }
  into.failures.insert(into.failures.end(), from.failures.begin(), from.failures.end());
  add_timing(into.timing, from.timing);
  const bool has_runtime = into.runtime && !into.runtime->is_null();
  if (from.runtime && !from.runtime->is_null() && !has_runtime) into.runtime = from.runtime;
  if (from.launches) {
    if (!into.launches) into.launches.emplace();
    into.launches->calls += from.launches->calls;
    into.launches->without_launch += from.launches->without_launch;
    for (const auto& [kernel, n] : from.launches->kernels) into.launches->kernels[kernel] += n;
  }
  // Each shard ran some of the op's corners; every shard names the same dropped ones.
  into.corners.insert(into.corners.end(), from.corners.begin(), from.corners.end());
  std::ranges::stable_sort(into.corners, {}, &result::CornerCase::index);
  for (const auto& name : from.corners_dropped) {
    if (std::ranges::find(into.corners_dropped, name) == into.corners_dropped.end())
      into.corners_dropped.push_back(name);
  }
  return {};
}

// Failures in case order when every failure carries its case index (as the engine writes them).
void order_failures(result::OpEntry& op) {
  auto& failures = op.failures;
  if (!std::ranges::all_of(failures, [](const auto& f) { return f.case_index.has_value(); })) return;
  std::ranges::stable_sort(failures, {}, [](const result::FailureEntry& f) { return *f.case_index; });
}

result::CiSection merge_ci(const std::vector<const Shard*>& shards) {
  result::CiSection ci;
  std::optional<bool> allow_partial;  // every shard allowed it; absent when no shard says
  std::vector<result::RegressionEntry> regressions;
  std::vector<std::string> warnings;
  bool any_baseline = false;
  for (const auto* shard : shards) {
    if (!shard->document.ci) continue;
    const auto& c = *shard->document.ci;
    ci.quick = ci.quick || c.quick;
    if (c.allow_partial) allow_partial = allow_partial.value_or(true) && *c.allow_partial;
    if (ci.lint.is_null()) ci.lint = c.lint;
    if (!c.baseline) continue;
    if (!any_baseline) ci.baseline = *c.baseline;
    any_baseline = true;
    regressions.insert(regressions.end(), c.baseline->regressions.begin(), c.baseline->regressions.end());
    for (const auto& w : c.baseline->warnings) {
      if (std::ranges::find(warnings, w) == warnings.end()) warnings.push_back(w);
    }
  }
  if (allow_partial) ci.allow_partial = *allow_partial;
  if (any_baseline) {
    const auto pair = [](const result::RegressionEntry& r) { return std::tie(r.op, r.dtype); };
    std::ranges::stable_sort(regressions, {}, pair);
    // Each shard compared its own cases with the baseline: an (op, dtype) failing in several shards
    // is one regression, reported with the numbers of the first shard (in merge order) that found it.
    const auto same_pair = [&](const auto& a, const auto& b) { return pair(a) == pair(b); };
    regressions.erase(std::unique(regressions.begin(), regressions.end(), same_pair), regressions.end());
    ci.baseline->regressions = std::move(regressions);
    ci.baseline->warnings = std::move(warnings);
  }
  return ci;
}

}  // namespace

Expected<ResultDocument> merge_documents(std::span<const ShardDocument> shards) {
  if (shards.empty()) {
    return fail(ErrorKind::usage,
                "report merge: no result documents given; pass the shard output "
                "directories (each holding a result.json)");
  }
  std::vector<Shard> decoded;
  decoded.reserve(shards.size());
  for (const auto& shard : shards) {
    decoded.push_back({&shard.name, TRY(result::from_json(shard.result, shard.name))});
    TRY(same_run(decoded.front(), decoded.back()));
  }
  std::vector<const Shard*> ordered;
  for (const auto& shard : decoded) ordered.push_back(&shard);
  // Shard order only decides the order of failures that carry no case index.
  std::ranges::stable_sort(ordered, {}, [](const Shard* s) {
    return shard_of(s->document).value_or(std::pair{0, 0});
  });
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    auto previous = shard_of(ordered[i - 1]->document), current = shard_of(ordered[i]->document);
    if (previous && current && *previous == *current) {
      return fail(ErrorKind::usage, *ordered[i]->name + " and " + *ordered[i - 1]->name + " are both shard " +
                                        *ordered[i]->document.ci->shard + "; pass each shard's output once");
    }
  }

  std::map<std::string, result::OpEntry> ops;  // sorted by name: the merged order
  std::vector<result::CutCase> cut;
  bool any_cut_field = false;
  std::vector<std::string> warnings;  // each once, in shard order
  bool passed = true, partial = false, any_ci = false;
  double duration = 0;
  for (const auto* shard : ordered) {
    const auto& doc = shard->document;
    passed = passed && doc.passed;
    partial = partial || doc.partial;
    duration = std::max(duration, doc.duration_secs);
    any_ci = any_ci || doc.ci.has_value();
    for (const auto& w : doc.warnings) {
      if (std::ranges::find(warnings, w) == warnings.end()) warnings.push_back(w);
    }
    if (doc.cut) {
      any_cut_field = true;
      cut.insert(cut.end(), doc.cut->begin(), doc.cut->end());
    }
    for (const auto& op : doc.ops) {
      auto [it, inserted] = ops.try_emplace(op.op, op);
      if (!inserted) TRY(merge_op(it->second, op, *shard->name));
    }
  }

  ResultDocument merged = decoded.front().document;
  merged.passed = passed;
  merged.partial = partial;
  merged.duration_secs = duration;
  merged.warnings = std::move(warnings);
  merged.ops.clear();
  std::optional<result::Timing> timing;
  for (auto& [name, op] : ops) {
    order_failures(op);
    // The merged op's status follows from the merged counts: not run in one shard, run in another is run.
    if (op.written_status) {
      op.written_status.reset();
      op.written_status = op.status();
    }
    add_timing(timing, op.timing);
    merged.ops.push_back(std::move(op));
  }
  if (timing) merged.timing = timing;
  if (any_cut_field) {
    std::ranges::stable_sort(cut, {}, [](const result::CutCase& c) { return std::tie(c.op, c.index); });
    merged.cut = std::move(cut);
  }
  if (any_ci) merged.ci = merge_ci(ordered);
  return merged;
}

Expected<nlohmann::json> merge_results(std::span<const ShardDocument> shards) {
  return result::to_json(TRY(merge_documents(shards)));
}

}  // namespace gpuemu::report
