// Recording a run while it executes (for the CLI and the daemon): each failure is committed before
// the run goes on, so a kill -9 loses nothing that was reported stored.
#pragma once

#include <functional>

#include "engine/executor.hpp"
#include "store/store.hpp"

namespace gpuemu::engine {

// A ResultSink that stores every failing case as it completes; summaries and the end mark follow
// at finish(). Thread-compatible: the executor calls on_case one record at a time.
class RunRecorder final : public ResultSink {
 public:
  // With `announce`, each stored failure is reported on stderr ("stored failure SEED of OP") only
  // after its commit, so whatever a person or a test saw reported survives a kill -9.
  static Expected<RunRecorder> start(store::Store& store, const store::RunInfo& info, bool announce = false);
  Expected<void> on_case(const result::CaseRecord& record) override;
  Expected<void> finish(const result::RunResult& result);
  store::RunId run_id() const { return run_; }
  int stored_failures() const { return stored_; }
  // Called after each stored failure (e.g. the daemon stops a run it is shutting down by
  // returning an error here); the failure is already committed when it runs.
  void set_after_store(std::function<Expected<void>()> hook) { after_store_ = std::move(hook); }

 private:
  RunRecorder(store::Store& store, store::RunId run, bool announce)
      : store_(&store), run_(run), announce_(announce) {}
  store::Store* store_;
  store::RunId run_;
  bool announce_;
  int stored_ = 0;
  std::function<Expected<void>()> after_store_;
};

}  // namespace gpuemu::engine
