// What the store hands back: rows of runs, per-dtype results, failures, baselines and artifact
// metrics, built from the engine's own types so callers print and replay them directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result/run_result.hpp"
#include "util/time.hpp"

namespace gpuemu::store {

using RunId = std::int64_t;
using FailureId = std::int64_t;
using Millis = util::Millis;  // milliseconds since the Unix epoch (UTC)

// What a run is, known when it starts.
struct RunInfo {
  std::string command;  // "test", "fuzz", "reproduce", "ci"
  std::uint64_t master_seed = 0;
  std::string config_digest;
  std::string project;
};
RunInfo run_info(const result::RunResult& result);

struct StoredRun {
  RunId id = 0;
  RunInfo info;
  Millis started_at = 0;
  std::optional<Millis> finished_at;  // unset: still running, or the process died (kill -9)
  double duration_secs = 0;
  bool partial = false;
  std::optional<bool> passed;  // unset until finish_run
  std::int64_t failures = 0;   // failures stored for this run so far (minimized ones excluded)
};

// One (run, op, dtype) summary.
struct StoredResult {
  std::int64_t id = 0;
  RunId run_id = 0;
  std::string command;  // of the run
  std::string op;
  std::string source;
  Millis created_at = 0;
  result::DtypeSummary summary;
};

struct StoredFailure {
  FailureId id = 0;
  std::optional<RunId> run_id;
  std::string config_digest;
  std::optional<std::uint64_t> master_seed;  // of its run, if the run row still exists
  std::optional<FailureId> minimized_from;   // set on a minimized case: the failure it came from
  Millis created_at = 0;
  bool has_snapshot = false;
  // record.inputs holds the decoded snapshot from find_failure/get_failure; list_failures leaves
  // it null (snapshots can be large) and says has_snapshot instead.
  result::CaseRecord record;
};

struct BaselineInfo {
  std::string tag;
  Millis created_at = 0;
};

struct Baseline {
  std::string tag;
  Millis created_at = 0;
  nlohmann::json document;  // the engine's baseline document, stored as given
};

// Lint metrics of one kernel, attached to a run or to a baseline tag (or both).
struct ArtifactMetrics {
  std::int64_t id = 0;  // set by the store
  std::string kernel;
  std::string source;
  nlohmann::json metrics;
  std::optional<RunId> run_id;
  std::optional<std::string> baseline_tag;
  Millis created_at = 0;  // set by the store
};

// Filters of the list queries; results come newest first (highest id first).
struct Query {
  std::optional<std::string> op;
  int limit = 20;               // <= 0: no limit
  std::optional<Millis> since;  // only rows created (runs: started) at or after this time
};

}  // namespace gpuemu::store
