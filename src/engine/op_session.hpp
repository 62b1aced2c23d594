// Runs single cases of one op: builds the case, runs the op under test and the reference
// through their runners, and has CaseJudge (case_judge.hpp) compare. One OpSession per (op, worker thread).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "check/compare.hpp"
#include "config/config.hpp"
#include "engine/case_judge.hpp"
#include "engine/task_thread.hpp"
#include "fuzz/case.hpp"
#include "proc/cancel.hpp"
#include "proc/runner.hpp"
#include "result/run_result.hpp"
#include "util/error.hpp"
#include "util/time_spans.hpp"
#include "wire/shared_file.hpp"

namespace gpuemu::engine {

// Settings shared by every session of a run.
proc::RunnerSettings runner_settings(const config::Config& config, const config::OpConfig& op,
                                     std::string role);

class OpSession {
 public:
  // `runners` makes the op's and the reference's runners (empty: proc::make_runner).
  OpSession(const config::Config& config, const config::OpConfig& op,
            const proc::RunnerFactory& runners = {});
  // A case started ahead and never asked for (the run stopped: fail_fast, its time budget, an
  // error) is cancelled, not run to its end.
  ~OpSession();
  OpSession(const OpSession&) = delete;
  OpSession& operator=(const OpSession&) = delete;

  // What run_seed does with the cases it expects next while the current one runs.
  enum class Ahead {
    // Generates and places its inputs on another thread (a wrong guess only costs that work): for
    // a caller that expects, but does not know, to run it next (another job thread may take it).
    make,
    // Also hands it to the op's and the reference's workers, each as soon as it is done with the
    // current case, while this thread judges the current one, and makes the case after it: for a
    // caller that knows it runs those seeds next (one job thread). A wrong guess costs a case run
    // and thrown away, and the workers then saw a case the run does not report;
    // docs/worker-protocol.md, "Cases started ahead".
    run,
  };

  // Generates the case for `seed` and runs it. Errors only for fatal conditions (the
  // interpreter cannot start, the schema cannot be resolved); script misbehaviour is a verdict.
  // `upcoming`, the seeds the caller expects to run next on this session, in order (the first
  // two are used): see Ahead.
  Expected<result::CaseRecord> run_seed(std::uint64_t seed, const std::vector<std::uint64_t>& upcoming = {},
                                        Ahead ahead = Ahead::make);

  // Runs a case whose inputs are given (a stored snapshot, or a minimizer's candidate).
  Expected<result::CaseRecord> run_case(const fuzz::Case& c);

  // Client-side modes: the op ran elsewhere and produced `outputs`; runs only the reference (with
  // `kwargs`, default the op's [ops.kwargs]) on the case's inputs and compares the same way, except
  // that the case dtype only picks the tolerance: a client's kernel may return any dtype (the
  // python-api's validate_op(dtype=...) is "the data type used for tolerance lookup").
  Expected<result::CaseRecord> check_output(const fuzz::Case& c, tensor::NamedTensors outputs,
                                            const nlohmann::json* kwargs = nullptr);

  // Runs op and reference on a case and hands back both raw answers (for calibration).
  struct RawOutputs {
    proc::RunOutcome op;
    proc::RunOutcome reference;
  };
  Expected<RawOutputs> run_raw(const fuzz::Case& c);

  const config::OpConfig& op() const { return op_; }

  // Starts the op's and the reference's workers without waiting for them (Runner::warm_up): called
  // while the op before runs its last cases, so this op's first case does not wait for their start.
  void warm_up();

  // Cases are made ahead only while the running one's inputs, times the cases made ahead, are at
  // most this large (default 256 MiB): three cases of 1 GiB and their input files at once could
  // exhaust a small CI runner, and at that size generating a case is a small part of running it anyway.
  static constexpr std::uint64_t kMostBytesMadeAhead = 256ull << 20;
  void set_most_bytes_made_ahead(std::uint64_t bytes) { most_bytes_made_ahead_ = bytes; }
  // Whether a case is being (or was) made ahead and not yet taken (tests watch this).
  bool making_ahead() const { return ahead_.valid() || started_.has_value(); }
  // Whether a case was handed to the workers ahead and not yet taken (tests watch this).
  bool started_ahead() const { return started_.has_value(); }

  // The run's time budget: a case still running then is killed and its record marked `cut`.
  void set_stop_at(std::chrono::steady_clock::time_point stop_at) { stop_at_ = stop_at; }

 private:
  // `placed`: c's inputs as views in the input file (same values), sent when the layout is plain.
  proc::RunOutcome run_reference(const fuzz::Case& c, const nlohmann::json* kwargs,
                                 const tensor::NamedTensors* placed = nullptr);

  // A case ready to run: generated, and its inputs placed in input_arenas_[arena] (no placement
  // when the arena is off or the op runs elsewhere).
  struct PreparedCase {
    std::uint64_t seed = 0;
    int arena = 0;
    Expected<fuzz::Case> c;
    std::optional<tensor::NamedTensors> placed;
  };
  PreparedCase prepare(std::uint64_t seed, int arena);
  // The case made ahead for `seed`, else one made now.
  PreparedCase take_prepared(std::uint64_t seed);
  std::optional<tensor::NamedTensors> place_now(const fuzz::Case& c);
  Expected<RawOutputs> run_placed(const fuzz::Case& c, const std::optional<tensor::NamedTensors>& placed);
  Expected<result::CaseRecord> run_prepared(const fuzz::Case& c,
                                            const std::optional<tensor::NamedTensors>& placed);
  // The record of a case both of whose calls came back: judged, timed, its inputs kept if it failed.
  result::CaseRecord judged(const fuzz::Case& c, RawOutputs raw, std::chrono::steady_clock::time_point start);
  // How long this case's calls ran at the same time as another call of this session: each other's,
  // or (a case started ahead) the calls of the case before. Remembers this case's spans.
  double overlap_secs(const proc::RunOutcome& op, const proc::RunOutcome& reference);

  // A case handed to the workers: its inputs made (or being made) on maker_, the op's and the
  // reference's calls queued on their threads behind the calls of the case before.
  struct StartedCase {
    std::uint64_t seed = 0;
    int arena = 0;
    std::shared_future<PreparedCase> prepared;
    std::future<proc::RunOutcome> op;
    std::future<proc::RunOutcome> reference;
    // Set when the case is abandoned: its calls stop as if cancelled.
    proc::CancelToken abandoned = std::make_shared<std::atomic<bool>>(false);
  };
  StartedCase hand_to_workers(std::shared_future<PreparedCase> prepared, std::uint64_t seed, int arena);
  Expected<result::CaseRecord> run_started(std::uint64_t seed, const std::vector<std::uint64_t>& upcoming,
                                           std::chrono::steady_clock::time_point start);
  // Whether `ahead` cases as large as `c` may be made ahead of it (most_bytes_made_ahead_).
  bool fits_ahead(const PreparedCase& prepared, std::uint64_t ahead) const;
  // The first input file that neither of two cases (-1: none) uses.
  static int arena_besides(int a, int b = -1);
  // Starts making the case of `seed` in input_arenas_[arena] on maker_ (ahead_).
  void make_ahead(std::uint64_t seed, int arena);
  // The case of `seed`: the one made ahead if it is that seed's, else one being made now on maker_
  // in a file besides `busy` (-1: any). A case made ahead for another seed is thrown away.
  struct BeingMade {
    std::shared_future<PreparedCase> made;
    int arena = 0;
  };
  BeingMade case_of(std::uint64_t seed, int busy);
  // Stops the case started ahead, if any, and throws its outcome away (a wrong guess; another way
  // of running a case needs the workers; the session ends): its calls are cancelled, and waited for.
  void drop_started();

  const config::OpConfig& op_;
  const CaseJudge judge_;
  std::unique_ptr<proc::Runner> op_runner_;
  std::unique_ptr<proc::Runner> reference_runner_;
  // The input files: the workers read one case's while the next case is placed in another, and
  // (cases started ahead) the case after it in the third.
  std::array<wire::InputArena, 3> input_arenas_;
  std::optional<std::chrono::steady_clock::time_point> stop_at_;
  bool parallel_reference_;  // the op and the reference run at the same time
  // The spans of the last case's calls (overlap_secs).
  std::vector<util::TimeSpan> last_spans_;
  // The threads that call the op (while this one runs the reference, or judges), call the reference
  // (cases started ahead) and make the next case, kept for the session (declared after what their
  // jobs use: joined first, after running what is queued).
  TaskThread op_caller_;
  TaskThread reference_caller_;
  TaskThread maker_;
  // A case being made by maker_, not yet handed to the workers: the next one (Ahead::make), or the
  // one after the case started ahead (Ahead::run).
  std::future<PreparedCase> ahead_;
  std::uint64_t ahead_seed_ = 0;
  int ahead_arena_ = 1;
  // The next case, handed to the workers (Ahead::run).
  std::optional<StartedCase> started_;
  std::uint64_t most_bytes_made_ahead_ = kMostBytesMadeAhead;
};

}  // namespace gpuemu::engine
