// The runner calls of one OpSession (see runner_pair.hpp): the op on a thread of its own while the
// reference runs, the reference always on contiguous row-major inputs.
#include "engine/runner_pair.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "proc/interpret.hpp"
#include "proc/runner_common.hpp"

namespace gpuemu::engine {
namespace {

// Off with GPUEMU_PARALLEL_REFERENCE=0 (docs/worker-protocol.md "The op and the reference at the same time").
bool parallel_reference_wanted() {
  const char* value = std::getenv("GPUEMU_PARALLEL_REFERENCE");
  return !(value && std::string_view(value) == "0");
}

}  // namespace

Expected<void> fatal_if_unstartable(const proc::RunOutcome& outcome) {
  if (outcome.failure == proc::RunFailure::start_failed) {
    return fail(ErrorKind::environment, outcome.message);
  }
  return {};
}

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

RawOutputs StartedCalls::wait() {
  RawOutputs raw;
  raw.op = op.get();
  raw.reference = reference.get();
  return raw;
}

void StartedCalls::abandon() {
  abandoned->store(true);
  for (auto* call : {&op, &reference}) {
    try {
      (void)call->get();
    } catch (...) {
    }
  }
}

RunnerPair::RunnerPair(const config::Config& config, const config::OpConfig& op,
                       const proc::RunnerFactory& runners)
    : op_(op), parallel_reference_(parallel_reference_wanted()) {
  const proc::RunnerFactory& make = runners ? runners : proc::RunnerFactory(proc::make_runner);
  if (!op.op_script.empty()) op_runner_ = make(op.op_script, runner_settings(config, op, "op"));
  reference_runner_ = make(op.reference, runner_settings(config, op, "reference"));
}

void RunnerPair::warm_up() {
  if (op_runner_) op_runner_->warm_up();
  reference_runner_->warm_up();
}

proc::RunOutcome RunnerPair::run_reference(const fuzz::Case& c, const nlohmann::json* kwargs,
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

Expected<RawOutputs> RunnerPair::run_both(const fuzz::Case& c,
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

StartedCalls RunnerPair::start(std::shared_future<PreparedCase> prepared) {
  StartedCalls started;
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

double RunnerPair::overlap_secs(const proc::RunOutcome& op, const proc::RunOutcome& reference) {
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

}  // namespace gpuemu::engine
