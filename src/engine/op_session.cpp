// Case execution for one op (see op_session.hpp): the op sees the case's real memory layout,
// the reference always gets contiguous row-major copies, and comparison happens in double.
#include "engine/op_session.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <variant>

#include <fmt/format.h>
#include <cstdlib>

#include "check/compare.hpp"
#include "proc/cancel.hpp"
#include "proc/interpret.hpp"
#include "proc/runner_common.hpp"
#include "util/time_spans.hpp"

namespace gpuemu::engine {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Fatal when a script could not even start: every case would fail the same way.
Expected<void> fatal_if_unstartable(const proc::RunOutcome& outcome) {
  if (outcome.failure == proc::RunFailure::start_failed) {
    return fail(ErrorKind::environment, outcome.message);
  }
  return {};
}

// Off with GPUEMU_PARALLEL_REFERENCE=0 (docs/worker-protocol.md "The op and the reference at the same time").
bool parallel_reference_wanted() {
  const char* value = std::getenv("GPUEMU_PARALLEL_REFERENCE");
  return !(value && std::string_view(value) == "0");
}

std::uint64_t input_bytes(const fuzz::Case& c) {
  std::uint64_t total = 0;
  for (const auto& [name, t] : c.inputs) total += t.data.size();
  return total;
}

}  // namespace

proc::RunnerSettings runner_settings(const config::Config& config, const config::OpConfig& op,
                                     std::string role) {
  proc::RunnerSettings s;
  const char* env_python = std::getenv("GPUEMU_PYTHON");
  s.python = env_python && *env_python ? env_python : config.validation.python;
  s.cwd = config.root;
  s.python_path = config.validation.python_path;
  const double secs = op.timeout_secs.value_or(config.validation.timeout);
  s.timeout = std::chrono::milliseconds(static_cast<long long>(secs * 1000));
  s.worker_max_cases = config.validation.worker_max_cases;
  s.framework = role == "reference" ? op.reference_framework : op.framework;
  s.numpy_bfloat16 = config.project.numpy_bfloat16;
  s.triton_interpret = proc::runs_interpreted(op.triton_interpret, proc::KernelLanguage::triton, s.python);
  s.pallas_interpret = proc::runs_interpreted(op.pallas_interpret, proc::KernelLanguage::pallas, s.python);
  s.triton_cuda_shim = op.interpreter_cuda_shim;
  s.sanitize = role == "op" && op.sanitize;  // the op's kernels are checked, never the reference's
  s.require_launch = role == "op" && op.require_launch;
  // The op's and the reference's workers compute at the same time: each gets half of the CPUs for
  // its BLAS and OpenMP threads, which would otherwise each take them all and spin against the other
  // (docs/worker-protocol.md "The op and the reference at the same time").
  if (parallel_reference_wanted()) s.pool_threads = std::max(1, proc::usable_cpus() / 2);
  if (role == "op" && op.autotune) s.autotune_pin = op.autotune->config;
  s.role = std::move(role);
  return s;
}

OpSession::OpSession(const config::Config& config, const config::OpConfig& op,
                     const proc::RunnerFactory& runners)
    : op_(op), judge_(config, op), parallel_reference_(parallel_reference_wanted()) {
  const proc::RunnerFactory& make = runners ? runners : proc::RunnerFactory(proc::make_runner);
  if (!op.op_script.empty()) op_runner_ = make(op.op_script, runner_settings(config, op, "op"));
  reference_runner_ = make(op.reference, runner_settings(config, op, "reference"));
}

OpSession::~OpSession() {
  drop_started();
}

void OpSession::warm_up() {
  if (op_runner_) op_runner_->warm_up();
  reference_runner_->warm_up();
}

OpSession::PreparedCase OpSession::prepare(std::uint64_t seed, int arena) {
  // The inputs once in an input file, which both workers map (wire/shared_file.hpp); without one,
  // each worker gets the bytes through its pipe. A contiguous case is generated straight into the file
  // (no buffer of its own to zero, fault in and copy); another layout is copied there.
  bool generated_in_file = false;
  fuzz::InputPlacer in_file;
  if (op_runner_) {
    in_file = [&](const std::vector<std::size_t>& sizes) {
      auto room = input_arenas_[arena].reserve(sizes);
      generated_in_file = room.has_value();
      return room;
    };
  }
  PreparedCase prepared{seed, arena, fuzz::generate_case(op_, seed, in_file), std::nullopt};
  if (prepared.c && generated_in_file) {
    prepared.placed = prepared.c->inputs;  // views of the file already
  } else if (prepared.c && op_runner_) {
    prepared.placed = input_arenas_[arena].place(prepared.c->inputs);
  }
  return prepared;
}

OpSession::PreparedCase OpSession::take_prepared(std::uint64_t seed) {
  if (ahead_.valid()) {
    PreparedCase ahead = ahead_.get();
    if (ahead.seed == seed) return ahead;
  }
  return prepare(seed, 0);  // nothing is being made ahead now: every file is free
}

int OpSession::arena_besides(int a, int b) {
  int arena = 0;
  while (arena == a || arena == b) ++arena;
  return arena;
}

bool OpSession::fits_ahead(const PreparedCase& prepared, std::uint64_t ahead) const {
  return prepared.c && input_bytes(*prepared.c) * ahead <= most_bytes_made_ahead_;
}

void OpSession::make_ahead(std::uint64_t seed, int arena) {
  ahead_seed_ = seed;
  ahead_arena_ = arena;
  ahead_ = maker_.submit([this, seed, arena] { return prepare(seed, arena); });
}

OpSession::BeingMade OpSession::case_of(std::uint64_t seed, int busy) {
  if (ahead_.valid() && ahead_seed_ == seed) return {ahead_.share(), ahead_arena_};
  if (ahead_.valid()) (void)ahead_.get();  // a wrong guess: its file is free once it is made
  const int arena = arena_besides(busy);
  return {maker_.submit([this, seed, arena] { return prepare(seed, arena); }).share(), arena};
}

Expected<result::CaseRecord> OpSession::run_seed(std::uint64_t seed,
                                                 const std::vector<std::uint64_t>& upcoming, Ahead ahead) {
  const auto start = Clock::now();
  if (started_ && started_->seed != seed) drop_started();
  // Cases start ahead only where the op and the reference run at once, each on a thread of its own.
  if (started_ || (ahead == Ahead::run && parallel_reference_ && op_runner_))
    return run_started(seed, ahead == Ahead::run ? upcoming : std::vector<std::uint64_t>{}, start);
  PreparedCase current = take_prepared(seed);
  if (!upcoming.empty() && fits_ahead(current, 1)) {
    // Made while this case runs, in another input file: the workers read this one meanwhile.
    make_ahead(upcoming.front(), arena_besides(current.arena));
  }
  if (!current.c) return std::unexpected(current.c.error());
  auto record = TRY(run_prepared(*current.c, current.placed));
  // The wall time includes generating the case (or waiting for it), which run_case cannot see.
  record.timing.wall_secs = seconds_since(start);
  return record;
}

OpSession::StartedCase OpSession::hand_to_workers(std::shared_future<PreparedCase> prepared,
                                                  std::uint64_t seed, int arena) {
  StartedCase started{seed, arena, prepared, {}, {}};
  // Each job lets go of the case before its result is handed over: the case's input file is free
  // again by the time the caller sees both results (InputArena::place makes a new file otherwise).
  started.op = op_caller_.submit(
      [this, prepared, token = proc::current_cancel(), abandoned = started.abandoned]() mutable {
        const proc::CancelScope scope(token, abandoned);
        proc::RunOutcome outcome;
        if (const PreparedCase& p = prepared.get(); p.c) {
          const tensor::NamedTensors& inputs = p.placed ? *p.placed : p.c->inputs;
          const proc::RunRequest request{op_.name,    p.c->params.dtype, &inputs,  &p.c->input_order,
                                         &op_.kwargs, stop_at_,          p.c->seed};
          outcome = op_runner_->run(request);
        }
        prepared = {};
        return outcome;
      });
  started.reference = reference_caller_.submit(
      [this, prepared, token = proc::current_cancel(), abandoned = started.abandoned]() mutable {
        const proc::CancelScope scope(token, abandoned);
        proc::RunOutcome outcome;
        if (const PreparedCase& p = prepared.get(); p.c)
          outcome = run_reference(*p.c, nullptr, p.placed ? &*p.placed : nullptr);
        prepared = {};
        return outcome;
      });
  return started;
}

void OpSession::drop_started() {
  if (!started_) return;
  StartedCase dropped = std::move(*started_);
  started_.reset();
  dropped.abandoned->store(true);
  // Its calls end before another call reaches the same workers; what they threw is no result.
  for (auto* call : {&dropped.op, &dropped.reference}) {
    try {
      (void)call->get();
    } catch (...) {
    }
  }
}

Expected<result::CaseRecord> OpSession::run_started(std::uint64_t seed,
                                                    const std::vector<std::uint64_t>& upcoming,
                                                    Clock::time_point start) {
  StartedCase current;
  if (started_) {
    current = std::move(*started_);
    started_.reset();
  } else {
    auto [made, arena] = case_of(seed, -1);  // no case is in flight: every file is free
    current = hand_to_workers(std::move(made), seed, arena);
  }
  const PreparedCase& prepared = current.prepared.get();
  if (!upcoming.empty() && fits_ahead(prepared, 1)) {
    // The case before this one is done with its input file: both its calls have come back. The
    // next case was usually made while the case before ran, so the op's worker need not wait for it.
    const std::uint64_t next = upcoming.front();
    auto [next_made, next_arena] = case_of(next, current.arena);
    started_ = hand_to_workers(std::move(next_made), next, next_arena);
    // The case after it, in the third file, is made while this one and the next run.
    if (upcoming.size() > 1 && fits_ahead(prepared, 2))
      make_ahead(upcoming[1], arena_besides(current.arena, next_arena));
  }
  RawOutputs raw;
  raw.op = current.op.get();  // what a call threw is rethrown here, where the request's handler catches it
  raw.reference = current.reference.get();
  if (!prepared.c) return std::unexpected(prepared.c.error());
  TRY(fatal_if_unstartable(raw.reference));
  TRY(fatal_if_unstartable(raw.op));
  return judged(*prepared.c, std::move(raw), start);
}

proc::RunOutcome OpSession::run_reference(const fuzz::Case& c, const nlohmann::json* kwargs,
                                          const tensor::NamedTensors* placed) {
  // The reference gets plain row-major inputs; the case's own tensors already are in the common
  // case, and copying a 64 MiB input only to hand it on would double the daemon's work.
  const bool plain = std::ranges::all_of(c.inputs, [](const auto& entry) {
    return entry.second.is_contiguous() &&
           entry.second.strides == tensor::contiguous_strides(entry.second.shape);
  });
  tensor::NamedTensors reference_inputs;
  if (!plain) {
    for (const auto& [name, t] : c.inputs) reference_inputs[name] = t.contiguous();
  }
  proc::RunRequest ref_request{op_.name,
                               c.params.dtype,
                               plain ? (placed ? placed : &c.inputs) : &reference_inputs,
                               &c.input_order,
                               kwargs ? kwargs : &op_.kwargs,
                               stop_at_,
                               c.seed};
  return reference_runner_->run(ref_request);
}

Expected<OpSession::RawOutputs> OpSession::run_raw(const fuzz::Case& c) {
  drop_started();
  return run_placed(c, place_now(c));
}

Expected<OpSession::RawOutputs> OpSession::run_placed(const fuzz::Case& c,
                                                      const std::optional<tensor::NamedTensors>& placed) {
  if (!op_runner_) {
    return fail(ErrorKind::config,
                fmt::format("op '{}' has no op under test to run here (execution_mode {}): "
                            "set op_script, or drive it from the Python client",
                            op_.name, config::execution_mode_name(op_.execution_mode)));
  }
  const tensor::NamedTensors& inputs = placed ? *placed : c.inputs;
  proc::RunRequest op_request{op_.name,    c.params.dtype, &inputs, &c.input_order,
                              &op_.kwargs, stop_at_,       c.seed};
  RawOutputs raw;
  if (parallel_reference_) {
    // The op on another thread while this one runs the reference: with a core to spare, a case
    // takes the longer of the two instead of their sum. Each runner is still used by one thread.
    std::future<void> op_done = op_caller_.submit([&, token = proc::current_cancel()] {
      const proc::CancelScope scope(token);
      raw.op = op_runner_->run(op_request);
    });
    {
      const WaitOnExit wait(op_done);  // the op's job uses this frame's locals, also if the reference throws
      raw.reference = run_reference(c, nullptr, placed ? &*placed : nullptr);
    }
    op_done.get();  // what the op's call threw is rethrown here, where the request's handler catches it
    TRY(fatal_if_unstartable(raw.reference));
    TRY(fatal_if_unstartable(raw.op));
    return raw;
  }
  raw.reference = run_reference(c, nullptr, placed ? &*placed : nullptr);
  TRY(fatal_if_unstartable(raw.reference));
  if (raw.reference.failure == proc::RunFailure::cut) {
    raw.op = raw.reference;  // the budget is spent: the op is not started
    raw.op.inside = {};
    raw.op.spans.clear();
    return raw;
  }
  raw.op = op_runner_->run(op_request);
  TRY(fatal_if_unstartable(raw.op));
  return raw;
}

// A case run without run_seed goes in the input file no case made ahead is using.
std::optional<tensor::NamedTensors> OpSession::place_now(const fuzz::Case& c) {
  if (!op_runner_) return std::nullopt;
  return input_arenas_[arena_besides(ahead_.valid() ? ahead_arena_ : -1)].place(c.inputs);
}

Expected<result::CaseRecord> OpSession::run_case(const fuzz::Case& c) {
  drop_started();
  return run_prepared(c, place_now(c));
}

Expected<result::CaseRecord> OpSession::run_prepared(const fuzz::Case& c,
                                                     const std::optional<tensor::NamedTensors>& placed) {
  const auto start = Clock::now();
  return judged(c, TRY(run_placed(c, placed)), start);
}

double OpSession::overlap_secs(const proc::RunOutcome& op, const proc::RunOutcome& reference) {
  std::vector<util::TimeSpan> spans = op.spans;
  spans.insert(spans.end(), reference.spans.begin(), reference.spans.end());
  std::vector<util::TimeSpan> with_before = last_spans_;
  with_before.insert(with_before.end(), spans.begin(), spans.end());
  // The time this case's calls covered that no earlier call had: a case started ahead may have run
  // while the case before ran its other call (at most one case before it is still running then).
  const auto newly = util::covered(std::move(with_before)) - util::covered(last_spans_);
  const auto already = util::covered(spans) - newly;  // covered by the case before too
  last_spans_ = std::move(spans);
  const auto both = op.inside + reference.inside - newly;
  // The two calls of one case overlap by at most the shorter one.
  const auto most = std::min(op.inside, reference.inside) + already;
  const auto bounded =
      std::clamp(both, std::chrono::nanoseconds(0), std::min(most, op.inside + reference.inside));
  return std::chrono::duration<double>(bounded).count();
}

result::CaseRecord OpSession::judged(const fuzz::Case& c, RawOutputs raw, Clock::time_point start) {
  result::CaseRecord record = judge_.new_record(c);
  // A case cut at the time budget has no verdict: the executor reports it apart and counts it nowhere.
  record.cut = raw.reference.failure == proc::RunFailure::cut || raw.op.failure == proc::RunFailure::cut;
  judge_.judge(record, c, raw.reference, raw.op, true);
  CaseJudge::keep_inputs_if_failed(record, c);
  record.timing.op_secs = std::chrono::duration<double>(raw.op.inside).count();
  record.timing.reference_secs = std::chrono::duration<double>(raw.reference.inside).count();
  record.timing.overlap_secs = overlap_secs(raw.op, raw.reference);
  record.runtime = std::move(raw.op.runtime);
  record.launches = std::move(raw.op.launches);
  if (!record.runtime.is_object()) record.runtime = nlohmann::json::object();
  // A script that reports nothing still ran with the framework its config names.
  if (!record.runtime.contains("framework"))
    record.runtime["framework"] = std::string(config::framework_name(op_.framework));
  record.timing.wall_secs = seconds_since(start);
  return record;
}

Expected<result::CaseRecord> OpSession::check_output(const fuzz::Case& c, tensor::NamedTensors outputs,
                                                     const nlohmann::json* kwargs) {
  drop_started();
  const auto start = Clock::now();
  result::CaseRecord record = judge_.new_record(c);
  const proc::RunOutcome ref = run_reference(c, kwargs);
  record.timing.reference_secs = std::chrono::duration<double>(ref.inside).count();
  TRY(fatal_if_unstartable(ref));
  proc::RunOutcome given;
  given.outputs = std::move(outputs);
  judge_.judge(record, c, ref, given, false);
  CaseJudge::keep_inputs_if_failed(record, c);
  record.timing.wall_secs = seconds_since(start);
  return record;
}

}  // namespace gpuemu::engine
