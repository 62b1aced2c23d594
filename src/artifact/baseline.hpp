// Artifact baselines: lint metrics stored in the SQLite store under a tag (table artifact_metrics,
// docs/store.md), and the diff of current metrics against them with [policies] artifact_thresholds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/lint.hpp"
#include "store/store.hpp"

namespace gpuemu::artifact {

// Records each report's metrics under `tag` (one row per kernel, committed before it returns).
// Storing a tag again adds newer rows; a diff reads the newest row per kernel.
Expected<void> store_baseline(store::Store& store, const std::string& tag,
                              const std::vector<KernelReport>& reports, const fs::path& root);

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

// Compares `reports` with the newest stored metrics of each kernel under `tag`. A threshold
// that names no metric is an error (config) with a suggestion.
Expected<ArtifactDiff> diff_baseline(const store::Store& store, const std::string& tag,
                                     const std::vector<KernelReport>& reports,
                                     const std::map<std::string, double>& thresholds);

nlohmann::json diff_to_json(const ArtifactDiff& diff);

}  // namespace gpuemu::artifact
