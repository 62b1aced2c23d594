// The gpuemu store: one SQLite database (WAL mode) holding runs, per-dtype results, failures
// with their input snapshots, baselines and artifact metrics. Spec and schema: docs/store.md.
//
// What "stored" means: a write method that returned success has COMMITTED its transaction to the
// write-ahead log. That survives kill -9 of this or any other process at any moment after the
// return, and the database still opens afterwards. With synchronous=NORMAL the last commits
// before a power loss or OS crash may be lost (the file stays consistent): we trade that for not
// paying an fsync per failure during a fuzz run. Report a result as stored only after the
// method returned.
//
// Concurrency: any number of processes may open the same file; writers wait for each other
// (busy timeout plus a retry loop, up to a minute) instead of failing with "database is locked".
// A Store object is safe to share between threads (calls are serialised by a mutex); for
// parallel writers, open one Store per thread.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/rows.hpp"
#include "util/error.hpp"

namespace gpuemu::store {

// $GPUEMU_HOME/db/gpuemu.db, with GPUEMU_HOME defaulting to ~/.gpuemu. Errors (environment)
// when neither GPUEMU_HOME nor HOME is set.
Expected<std::filesystem::path> default_db_path();

// Time source, a seam so tests can place rows in time. Default: the system clock.
using Clock = std::function<Millis()>;

class Store {
 public:
  // Opens or creates the database, creating missing parent directories with mode 0700, and
  // migrates it to this build's schema. Refuses (never modifies) a file that is not SQLite, is
  // corrupt, belongs to another application, or comes from a newer gpuemu: the error names the
  // file and what to do.
  static Expected<Store> open(const std::filesystem::path& db_file);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& file() const;
  void set_clock(Clock clock);

  // Streaming writes: each call is one short transaction, committed before it returns.
  Expected<RunId> begin_run(const RunInfo& info);
  // One failure with its input snapshot (if record.inputs is set), attached to the run.
  Expected<FailureId> record_failure(RunId run, const result::CaseRecord& record);
  // The per-dtype summaries of one op (op.failures are NOT written: stream them with
  // record_failure). Recording the same (op, dtype) again replaces it.
  Expected<void> record_op_summary(RunId run, const result::OpResult& op);
  // Marks the run finished: duration, partial, passed.
  Expected<void> finish_run(RunId run, const result::RunResult& result);
  // A whole run at once (begin, every failure, every summary, finish) in one transaction, for
  // callers that do not stream. Returns the run id.
  Expected<RunId> record_run(const result::RunResult& result);
  // A minimized case, linked to the failure it was shrunk from; it inherits that failure's run
  // and config digest. Errors (usage) if `original` does not exist.
  Expected<FailureId> record_minimized(FailureId original, const result::CaseRecord& record);

  // Queries, newest first. list_failures leaves record.inputs null.
  Expected<std::vector<StoredRun>> list_runs(const Query& query = {}) const;
  Expected<std::vector<StoredResult>> list_results(const Query& query = {}) const;
  Expected<std::vector<StoredFailure>> list_failures(const Query& query = {}) const;
  // The newest failure with this case seed (of this op, if given), snapshot decoded into
  // record.inputs. nullopt if there is none. A damaged snapshot is an error (parse).
  Expected<std::optional<StoredFailure>> find_failure(
      std::uint64_t seed, const std::optional<std::string>& op = std::nullopt) const;
  Expected<std::optional<StoredFailure>> get_failure(FailureId id) const;
  // Failures minimized from `original`, newest first.
  Expected<std::vector<StoredFailure>> list_minimized(FailureId original) const;

  // Baselines: a tag names one JSON document; storing a tag again replaces it.
  Expected<void> store_baseline(const std::string& tag, const nlohmann::json& document);
  Expected<std::optional<Baseline>> get_baseline(const std::string& tag) const;
  Expected<std::vector<BaselineInfo>> list_baselines() const;
  // Returns false if there was no such tag.
  Expected<bool> delete_baseline(const std::string& tag);

  // Artifact (lint) metrics. Returns the new row's id.
  Expected<std::int64_t> record_artifact_metrics(const ArtifactMetrics& metrics);
  // Rows for a run, or for a baseline tag (or every row when both are unset), newest first.
  Expected<std::vector<ArtifactMetrics>> list_artifact_metrics(
      const std::optional<RunId>& run, const std::optional<std::string>& baseline_tag) const;
  // An artifact baseline: `rows` (one per kernel) recorded under `tag` in one transaction. Storing
  // a tag again adds newer rows; artifact_baseline reads the newest row of each kernel.
  Expected<void> record_artifact_baseline(const std::string& tag, std::vector<ArtifactMetrics> rows);
  // kernel -> metrics of the newest row under `tag`; empty when nothing was stored under it.
  Expected<std::map<std::string, nlohmann::json>> artifact_baseline(const std::string& tag) const;

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuemu::store
