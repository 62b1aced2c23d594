// Runs single cases of one op: builds the case, has RunnerPair (runner_pair.hpp) call the op under test
// and the reference, and CaseJudge (case_judge.hpp) compare. One OpSession per (op, worker thread).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "engine/case_judge.hpp"
#include "engine/runner_pair.hpp"
#include "engine/task_thread.hpp"
#include "fuzz/case.hpp"
#include "proc/runner.hpp"
#include "result/run_result.hpp"
#include "util/error.hpp"
#include "wire/shared_file.hpp"

namespace gpuemu::engine {

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
  using RawOutputs = engine::RawOutputs;
  Expected<RawOutputs> run_raw(const fuzz::Case& c);

  const config::OpConfig& op() const { return op_; }

  // Starts the op's and the reference's workers without waiting for them (Runner::warm_up): called
  // while the op before runs its last cases, so this op's first case does not wait for their start.
  void warm_up() { runners_.warm_up(); }

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
  void set_stop_at(std::chrono::steady_clock::time_point stop_at) { runners_.set_stop_at(stop_at); }

 private:
  // A case ready to run, its inputs placed in input_arenas_[arena].
  PreparedCase prepare(std::uint64_t seed, int arena);
  // The case made ahead for `seed`, else one made now.
  PreparedCase take_prepared(std::uint64_t seed);
  std::optional<tensor::NamedTensors> place_now(const fuzz::Case& c);
  Expected<result::CaseRecord> run_prepared(const fuzz::Case& c,
                                            const std::optional<tensor::NamedTensors>& placed);
  // The record of a case both of whose calls came back: judged, timed, its inputs kept if it failed.
  result::CaseRecord judged(const fuzz::Case& c, RawOutputs raw, std::chrono::steady_clock::time_point start);

  // A case handed to the workers: its inputs made (or being made) on maker_, the op's and the
  // reference's calls queued on their threads behind the calls of the case before (RunnerPair::start).
  struct StartedCase {
    std::uint64_t seed = 0;
    int arena = 0;
    std::shared_future<PreparedCase> prepared;
    StartedCalls calls;
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
  // The input files: the workers read one case's while the next case is placed in another, and
  // (cases started ahead) the case after it in the third.
  std::array<wire::InputArena, 3> input_arenas_;
  // The runners and the threads that call them (declared after the input files their calls read:
  // those threads are joined first, after running what is queued).
  RunnerPair runners_;
  // The thread that makes the next case, kept for the session (declared after the input files and
  // runners_ its jobs use: joined first, after running what is queued).
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
