// The CLI's use of the SQLite store: opening it at $GPUEMU_HOME/db/gpuemu.db, recording runs as
// they happen, and finding stored cases again by seed (for reproduce, show and minimize).
#pragma once

#include <optional>

#include "cli/command.hpp"
#include "engine/executor.hpp"
#include "fuzz/case.hpp"
#include "store/store.hpp"

namespace gpuemu::cli {

Expected<store::Store> open_store();

// Records a run while it executes: each failure is committed before the run goes on, so a
// kill -9 loses nothing that was reported stored; summaries and the end mark follow at finish().
class RunRecorder final : public engine::ResultSink {
 public:
  // With `announce`, each stored failure is reported on stderr ("stored failure SEED of OP") only
  // after its commit, so whatever a person or a test saw reported survives a kill -9.
  static Expected<RunRecorder> start(store::Store& store, const store::RunInfo& info, bool announce = false);
  Expected<void> on_case(const engine::CaseRecord& record) override;
  Expected<void> finish(const engine::RunResult& result);
  store::RunId run_id() const { return run_; }
  int stored_failures() const { return stored_; }

 private:
  RunRecorder(store::Store& store, store::RunId run, bool announce) : store_(&store), run_(run), announce_(announce) {}
  store::Store* store_;
  store::RunId run_;
  bool announce_;
  int stored_ = 0;
};

// A case to re-run, from the store (snapshot or seed) or regenerated from the seed.
struct ResolvedCase {
  const config::OpConfig* op = nullptr;
  fuzz::Case c;
  std::optional<store::StoredFailure> stored;  // when it came from the store
  bool from_snapshot = false;
};

// Finds the case of `seed`: the newest stored failure with that seed (of `op_name` if given);
// replays from the input snapshot when the config changed since or the case was minimized;
// otherwise regenerates it from the seed (which needs op_name when the store has nothing).
Expected<ResolvedCase> resolve_case(Context& context, std::uint64_t seed, const std::string& op_name);

}  // namespace gpuemu::cli
