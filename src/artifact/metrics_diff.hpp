// Artifact baselines: the diff of current lint metrics against a baseline's (which the store
// keeps under a tag, store::Store::artifact_baseline) with [policies] artifact_thresholds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/lint.hpp"

namespace gpuemu::artifact {

struct MetricDelta {
  std::string metric;
  std::optional<std::int64_t> baseline, current;
  std::optional<double> threshold;  // allowed growth factor from artifact_thresholds
  bool regressed = false;           // current > baseline * threshold
  bool changed() const { return baseline != current; }
};

struct KernelDiff {
  std::string kernel;
  bool in_baseline = false;
  std::vector<MetricDelta> deltas;  // metrics that changed, and every metric with a threshold
  bool regressed() const;
  int changed() const;  // deltas whose value changed (the others are watched, unchanged metrics)
};

struct ArtifactDiff {
  std::string tag;
  bool baseline_found = false;  // false: no rows for the tag (a warning, not a failure)
  std::vector<KernelDiff> kernels;
  std::vector<std::string> only_in_baseline;  // kernels the baseline has and this lint does not
  int regressions() const;
};

// Compares `reports` with `baseline` (kernel -> metrics JSON, the newest stored row of each kernel
// under `tag`; empty: no such baseline). A threshold that names no metric is an error (config)
// with a suggestion.
Expected<ArtifactDiff> diff_baseline(const std::string& tag,
                                     const std::map<std::string, nlohmann::json>& baseline,
                                     const std::vector<KernelReport>& reports,
                                     const std::map<std::string, double>& thresholds);

nlohmann::json diff_to_json(const ArtifactDiff& diff);

}  // namespace gpuemu::artifact
