// The warm runner: one `python -m gpuemu.worker` process per runner, kept loaded between cases
// and spoken to in binary frames (docs/worker-protocol.md). Restarted after a crash or a hang,
// recycled after RunnerSettings::worker_max_cases cases.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>

#include "proc/runner.hpp"
#include "proc/spawn.hpp"
#include "wire/segment.hpp"
#include "wire/shared_file.hpp"

namespace gpuemu::proc {

class WorkerChannel;

// Serves cases from a warm worker for a `module:function` callable or a persistent script.
// Used by one thread at a time, like every Runner.
class WarmWorkerRunner final : public Runner {
 public:
  WarmWorkerRunner(config::Runnable runnable, RunnerSettings settings);
  ~WarmWorkerRunner() override;
  RunOutcome run(const RunRequest& request) override;
  // Spawns the worker, if none runs, and returns before its "ready" frame: it imports the user's
  // code while the caller goes on (the executor starts the next op's workers during this op's last cases).
  void warm_up() override;

  // The current worker's pid, or -1 when none is running (tests use this to watch restarts).
  pid_t worker_pid() const;
  int workers_started() const { return workers_started_; }

  // The worker's command line (after the interpreter), e.g. {"-m", "gpuemu.worker", "--callable", ...}.
  std::vector<std::string> worker_args() const;
  // How a worker is started: the interpreter and worker_args(), its directory, environment and preloads.
  SpawnSpec spawn_spec() const;

 private:
  // Starts a worker (spawn_worker) and waits for its "ready" frame (await_ready, which counts only
  // the part of its import after `counted_from` as the case's); on failure fills `outcome`.
  bool spawn_worker(RunOutcome& outcome);
  bool await_ready(RunOutcome& outcome, std::chrono::steady_clock::time_point counted_from);
  void stop_worker();
  void fail_with_exit(RunOutcome& outcome, const std::string& when);

  config::Runnable runnable_;
  RunnerSettings settings_;
  std::string what_;
  std::optional<bool> interpreter_ok_;
  std::unique_ptr<WorkerChannel> worker_;
  // Set while worker_ was spawned and its "ready" frame is not read yet: by when it must come.
  std::optional<std::chrono::steady_clock::time_point> ready_by_;
  int cases_on_worker_ = 0;
  // Segments the worker lent us (its large outputs) that we no longer read; the next call returns them.
  std::shared_ptr<wire::SegmentReleases> releases_ = std::make_shared<wire::SegmentReleases>();
  int workers_started_ = 0;
  // Time the current worker spent importing the user's code ("load_ns" of its ready frame), added
  // to the inside time of its first case; and the latest "runtime" it reported.
  std::chrono::nanoseconds pending_load_{0};
  util::TimeSpan load_span_{};
  nlohmann::json runtime_;
  // Whether calls name inputs that lie in an input file (shared_file.hpp) instead of sending their
  // bytes: the worker said it maps them ("mapped_inputs" in its ready frame), and no worker of this
  // runner has failed to open one.
  bool maps_inputs_ = false;
  bool input_files_refused_ = false;
  // Whether calls offer an output file (the worker said "mapped_outputs"), and the files offered.
  bool maps_outputs_ = false;
  wire::OutputFiles output_files_;
};

}  // namespace gpuemu::proc
