// The diff of lint metrics against an artifact baseline (metrics_diff.hpp): a metric regresses
// when it grows beyond its artifact_thresholds factor.
#include "artifact/metrics_diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/suggest.hpp"

namespace gpuemu::artifact {
namespace {

// Names a threshold may use even when this lint did not measure them (e.g. without ptxas).
const std::vector<std::string> kKnownMetrics = {"registers",
                                                "virtual_registers",
                                                "virtual_registers_32bit",
                                                "spills",
                                                "spill_stores_bytes",
                                                "spill_loads_bytes",
                                                "stack_frame_bytes",
                                                "local_memory_bytes",
                                                "shared_memory_bytes",
                                                "constant_memory_bytes",
                                                "named_barriers",
                                                "instructions",
                                                "sass.instructions",
                                                "params",
                                                "param_bytes",
                                                "branches",
                                                "backward_branches",
                                                "barriers",
                                                "calls",
                                                "fma",
                                                "tensor_core",
                                                "ld.local",
                                                "st.local"};

bool known_metric(const std::string& name, const std::set<std::string>& seen) {
  if (seen.contains(name) ||
      std::find(kKnownMetrics.begin(), kKnownMetrics.end(), name) != kKnownMetrics.end()) {
    return true;
  }
  for (std::string_view prefix :
       {"opcode.", "sass.", "virtual_registers.", "ld.", "st.", "atom.", "red.", "ldu."}) {
    if (name.starts_with(prefix) && name.size() > prefix.size()) return true;
  }
  return false;
}

}  // namespace

bool KernelDiff::regressed() const {
  return std::any_of(deltas.begin(), deltas.end(), [](const MetricDelta& d) { return d.regressed; });
}

int KernelDiff::changed() const {
  return static_cast<int>(
      std::count_if(deltas.begin(), deltas.end(), [](const MetricDelta& d) { return d.changed(); }));
}

int ArtifactDiff::regressions() const {
  int n = 0;
  for (const auto& k : kernels) {
    for (const auto& d : k.deltas) n += d.regressed ? 1 : 0;
  }
  return n;
}

Expected<ArtifactDiff> diff_baseline(const std::string& tag,
                                     const std::map<std::string, nlohmann::json>& stored,
                                     const std::vector<KernelReport>& reports,
                                     const std::map<std::string, double>& thresholds) {
  ArtifactDiff diff;
  diff.tag = tag;
  std::map<std::string, std::map<std::string, std::int64_t>> baseline;  // kernel -> numeric metrics
  for (const auto& [kernel, metrics] : stored) baseline.emplace(kernel, numeric_metrics(metrics));
  diff.baseline_found = !baseline.empty();

  std::set<std::string> seen;
  for (const auto& [kernel, metrics] : baseline) {
    for (const auto& [name, value] : metrics) seen.insert(name);
  }
  for (const KernelReport& r : reports) {
    for (const auto& [name, metric] : r.metrics) seen.insert(name);
  }
  std::vector<std::string> names(seen.begin(), seen.end());
  names.insert(names.end(), kKnownMetrics.begin(), kKnownMetrics.end());
  for (const auto& [name, factor] : thresholds) {
    if (!known_metric(name, seen)) {
      return fail(ErrorKind::config,
                  fmt::format("[policies.artifact_thresholds] names '{}', which is no kernel "
                              "metric{}; metric names are listed in docs/lint.md",
                              name, util::did_you_mean_suffix(name, names)));
    }
  }

  std::set<std::string> current_kernels;
  for (const KernelReport& r : reports) {
    current_kernels.insert(r.name);
    KernelDiff k;
    k.kernel = r.name;
    const auto base_it = baseline.find(r.name);
    k.in_baseline = base_it != baseline.end();
    std::set<std::string> metric_names;
    for (const auto& [name, metric] : r.metrics) {
      if (metric.number()) metric_names.insert(name);
    }
    if (k.in_baseline) {
      for (const auto& [name, value] : base_it->second) metric_names.insert(name);
    }
    for (const std::string& name : metric_names) {
      MetricDelta d;
      d.metric = name;
      if (auto it = r.metrics.find(name); it != r.metrics.end()) d.current = it->second.number();
      if (k.in_baseline) {
        if (auto it = base_it->second.find(name); it != base_it->second.end()) d.baseline = it->second;
      }
      if (auto t = thresholds.find(name); t != thresholds.end()) d.threshold = t->second;
      if (d.threshold && d.baseline && d.current) {
        d.regressed = static_cast<double>(*d.current) > static_cast<double>(*d.baseline) * *d.threshold;
      }
      if (k.in_baseline && (d.threshold || d.baseline != d.current)) k.deltas.push_back(std::move(d));
    }
    diff.kernels.push_back(std::move(k));
  }
  for (const auto& [kernel, metrics] : baseline) {
    if (!current_kernels.contains(kernel)) diff.only_in_baseline.push_back(kernel);
  }
  return diff;
}

nlohmann::json diff_to_json(const ArtifactDiff& diff) {
  const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelDiff& k : diff.kernels) {
    nlohmann::json deltas = nlohmann::json::array();
    for (const MetricDelta& d : k.deltas) {
      nlohmann::json delta = nullptr;
      if (d.baseline && d.current) delta = *d.current - *d.baseline;
      deltas.push_back({{"metric", d.metric},
                        {"baseline", opt(d.baseline)},
                        {"current", opt(d.current)},
                        {"delta", delta},
                        {"threshold", opt(d.threshold)},
                        {"regressed", d.regressed}});
    }
    kernels.push_back({{"name", k.kernel},
                       {"in_baseline", k.in_baseline},
                       {"regressed", k.regressed()},
                       {"metrics", std::move(deltas)}});
  }
  return {{"tag", diff.tag},
          {"baseline_found", diff.baseline_found},
          {"kernels", std::move(kernels)},
          {"only_in_baseline", diff.only_in_baseline},
          {"regressions", diff.regressions()}};
}

}  // namespace gpuemu::artifact
