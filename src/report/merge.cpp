// Merging shard results (see merge.hpp). Every ordering here is by a key, never by the order the
// shards were given in, so any permutation of the same shards merges to the same bytes.
#include "report/merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "report/result_document.hpp"
#include "report/run_facts.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::report {

namespace keys = util::result_keys;
namespace {

// The worse of two statistics; NaN (a comparison that broke down) is the worst of all.
nlohmann::json worse_number(const nlohmann::json& a, const nlohmann::json& b) {
  double x = decode_number(a), y = decode_number(b);
  if (std::isnan(x)) return a;
  if (std::isnan(y)) return b;
  return y > x ? b : a;
}

// "2/4" -> 2; nullopt when the shard is not named.
std::optional<std::pair<int, int>> shard_of(const nlohmann::json& result) {
  if (!result.contains("ci") || !result["ci"].is_object()) return std::nullopt;
  const auto& shard = result["ci"].value("shard", nlohmann::json());
  if (!shard.is_string()) return std::nullopt;
  int index = 0, count = 0;
  char slash = 0;
  if (std::sscanf(shard.get<std::string>().c_str(), "%d%c%d", &index, &slash, &count) != 3 || slash != '/') {
    return std::nullopt;
  }
  return std::pair{index, count};
}

Expected<void> same_run(const ShardDocument& first, const ShardDocument& other) {
  for (const auto* key : {"schema_version", "tool", "command", "seed", "config_digest", "project"}) {
    if (first.result[key] != other.result[key]) {
      return fail(ErrorKind::usage, other.name + ": " + key + " is " + other.result[key].dump() + " but " +
                                        first.name + " has " + first.result[key].dump() +
                                        "; merge only the shards of one run (same seed, config and gpuemu)");
    }
  }
  return {};
}

Expected<void> merge_dtype(nlohmann::json& into, const nlohmann::json& from, const std::string& where) {
  for (const auto* key : keys::kTolerance) {
    if (into[key] != from[key]) {
      return fail(ErrorKind::usage, where + ": the shards used different tolerances (" + key + " " +
                                        into[key].dump() + " vs " + from[key].dump() +
                                        "); merge only the shards of one run");
    }
  }
  for (const auto* key : {"total", "passed", "failed", "errors"}) {
    into[key] = into[key].get<std::int64_t>() + from[key].get<std::int64_t>();
  }
  for (const auto* key : keys::kErrorStats) {
    into[key] = worse_number(into[key], from[key]);
  }
  return {};
}

Expected<void> merge_op(nlohmann::json& into, const nlohmann::json& from, const std::string& shard_name) {
  const std::string name = into["op"];
  if (into["source"] != from["source"]) {
    return fail(ErrorKind::usage, shard_name + ": op '" + name + "' has source " + from["source"].dump() +
                                      " but another shard has " + into["source"].dump() +
                                      "; merge only the shards of one run");
  }
  for (const auto* key : {"total", "passed", "failed", "errors"}) {
    into[key] = into[key].get<std::int64_t>() + from[key].get<std::int64_t>();
  }
  for (const auto& dtype : from["dtypes"]) {
    auto it = std::find_if(into["dtypes"].begin(), into["dtypes"].end(),
                           [&](const nlohmann::json& d) { return d["dtype"] == dtype["dtype"]; });
    if (it == into["dtypes"].end()) {
      into["dtypes"].push_back(dtype);
    } else {
      TRY(merge_dtype(*it, dtype, shard_name + ": op '" + name + "' dtype " + dtype["dtype"].dump()));
    }
  }
  for (const auto& failure : from["failures"]) into["failures"].push_back(failure);
  if (from.contains("timing"))
    into["timing"] = add_timing(into.value("timing", nlohmann::json()), from["timing"]);
  const auto runtime = from.value("runtime", nlohmann::json());
  if (!runtime.is_null() && (!into.contains("runtime") || into["runtime"].is_null()))
    into["runtime"] = runtime;
  return {};
}

// The merged op's status follows from the merged counts: not run in one shard, run in another is run.
void restate_status(nlohmann::json& op) {
  op.erase("status");
  op["status"] = op_status(op);
}

// Failures in case order when every failure carries its case index (as the engine writes them).
void order_failures(nlohmann::json& op) {
  auto& failures = op["failures"];
  bool indexed = std::all_of(failures.begin(), failures.end(), [](const nlohmann::json& f) {
    return f.contains("case") && f["case"].is_number();
  });
  if (!indexed) return;
  std::stable_sort(failures.begin(), failures.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["case"].get<std::uint64_t>() < b["case"].get<std::uint64_t>();
  });
}

nlohmann::json merge_ci(const std::vector<const ShardDocument*>& shards) {
  nlohmann::json ci = {{"quick", false}, {"shard", nullptr}, {"baseline", nullptr}, {"lint", nullptr}};
  std::optional<bool> allow_partial;  // every shard allowed it; absent when no shard says
  nlohmann::json regressions = nlohmann::json::array(), warnings = nlohmann::json::array();
  bool any_baseline = false;
  for (const auto* shard : shards) {
    const auto& c = shard->result.value("ci", nlohmann::json());
    if (!c.is_object()) continue;
    ci["quick"] = ci["quick"].get<bool>() || c.value("quick", false);
    if (c.contains("allow_partial"))
      allow_partial = allow_partial.value_or(true) && c.value("allow_partial", false);
    if (ci["lint"].is_null() && c.contains("lint")) ci["lint"] = c["lint"];
    const auto& baseline = c.value("baseline", nlohmann::json());
    if (!baseline.is_object()) continue;
    if (!any_baseline) ci["baseline"] = baseline;
    any_baseline = true;
    for (const auto& r : baseline.value("regressions", nlohmann::json::array())) regressions.push_back(r);
    for (const auto& w : baseline.value("warnings", nlohmann::json::array())) {
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    }
  }
  if (allow_partial) ci["allow_partial"] = *allow_partial;
  if (any_baseline) {
    std::stable_sort(
        regressions.begin(), regressions.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
          return std::tie(a["op"].get_ref<const std::string&>(), a["dtype"].get_ref<const std::string&>()) <
                 std::tie(b["op"].get_ref<const std::string&>(), b["dtype"].get_ref<const std::string&>());
        });
    // Each shard compared its own cases with the baseline: an (op, dtype) failing in several shards
    // is one regression, reported with the numbers of the first shard (in merge order) that found it.
    const auto same_pair = [](const nlohmann::json& a, const nlohmann::json& b) {
      return a["op"] == b["op"] && a["dtype"] == b["dtype"];
    };
    regressions.erase(std::unique(regressions.begin(), regressions.end(), same_pair), regressions.end());
    ci["baseline"]["regressions"] = regressions;
    ci["baseline"]["warnings"] = warnings;
  }
  return ci;
}

}  // namespace

Expected<nlohmann::json> merge_results(std::span<const ShardDocument> shards) {
  if (shards.empty()) {
    return fail(ErrorKind::usage,
                "report merge: no result documents given; pass the shard output "
                "directories (each holding a result.json)");
  }
  std::vector<const ShardDocument*> ordered;
  for (const auto& shard : shards) {
    TRY(validate_result(shard.result, shard.name));
    TRY(same_run(shards.front(), shard));
    ordered.push_back(&shard);
  }
  // Shard order only decides the order of failures that carry no case index.
  std::stable_sort(ordered.begin(), ordered.end(), [](const ShardDocument* a, const ShardDocument* b) {
    return shard_of(a->result).value_or(std::pair{0, 0}) < shard_of(b->result).value_or(std::pair{0, 0});
  });
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    auto previous = shard_of(ordered[i - 1]->result), current = shard_of(ordered[i]->result);
    if (previous && current && *previous == *current) {
      return fail(ErrorKind::usage, ordered[i]->name + " and " + ordered[i - 1]->name + " are both shard " +
                                        ordered[i]->result["ci"]["shard"].get<std::string>() +
                                        "; pass each shard's output once");
    }
  }

  std::map<std::string, nlohmann::json> ops;  // sorted by name: the merged order
  nlohmann::json cut = nlohmann::json::array();
  bool any_cut_field = false;
  bool passed = true, partial = false, any_ci = false;
  double duration = 0;
  for (const auto* shard : ordered) {
    const auto& result = shard->result;
    passed = passed && result["passed"].get<bool>();
    partial = partial || result["partial"].get<bool>();
    duration = std::max(duration, number_field(result, "duration_secs"));
    any_ci = any_ci || (result.contains("ci") && result["ci"].is_object());
    if (result.contains("cut")) {
      any_cut_field = true;
      for (const auto& c : result["cut"]) cut.push_back(c);
    }
    for (const auto& op : result["ops"]) {
      auto [it, inserted] = ops.try_emplace(op["op"].get<std::string>(), op);
      if (!inserted) TRY(merge_op(it->second, op, shard->name));
    }
  }

  nlohmann::json merged = shards.front().result;
  merged["passed"] = passed;
  merged["partial"] = partial;
  merged["duration_secs"] = duration;
  merged["ops"] = nlohmann::json::array();
  nlohmann::json timing;
  for (auto& [name, op] : ops) {
    order_failures(op);
    if (op.contains("status")) restate_status(op);
    if (op.contains("timing")) timing = add_timing(timing, op["timing"]);
    merged["ops"].push_back(std::move(op));
  }
  if (timing.is_object()) merged["timing"] = timing;
  if (any_cut_field) {
    std::stable_sort(cut.begin(), cut.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return std::pair(a["op"].get<std::string>(), a["case"].get<std::uint64_t>()) <
             std::pair(b["op"].get<std::string>(), b["case"].get<std::uint64_t>());
    });
    merged["cut"] = std::move(cut);
  }
  if (any_ci) merged["ci"] = merge_ci(ordered);
  TRY(validate_result(merged, "merged result"));
  return merged;
}

}  // namespace gpuemu::report
