// WarmWorkerRunner (warm_worker.hpp): starts, feeds, restarts and recycles a worker process,
// mapping every way a worker can misbehave to a RunOutcome.
#include "proc/warm_worker.hpp"

#include <fmt/format.h>

#include "proc/runner_common.hpp"
#include "proc/worker_channel.hpp"
#include "wire/frames.hpp"

namespace gpuemu::proc {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxControlFrame = 16u << 20;  // ready / fatal frames
// How long a worker that ran out of time gets to say where it is (WorkerChannel::where_stopped): a
// Python loop answers within a bytecode; a call in C code answers when it returns, or not at all.
constexpr std::chrono::milliseconds kWhereStoppedGrace{500};

std::string string_field(const nlohmann::json& header, const char* key) {
  auto it = header.find(key);
  return it != header.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string with_traceback(std::string stderr_text, const std::string& traceback) {
  if (traceback.empty()) return stderr_text;
  if (!stderr_text.empty() && !stderr_text.ends_with('\n')) stderr_text += '\n';
  return stderr_text + traceback;
}

}  // namespace

WarmWorkerRunner::WarmWorkerRunner(config::Runnable runnable, RunnerSettings settings)
    : runnable_(std::move(runnable)), settings_(std::move(settings)) {
  what_ = describe_runnable(runnable_, settings_);
}

WarmWorkerRunner::~WarmWorkerRunner() {
  stop_worker();
}

pid_t WarmWorkerRunner::worker_pid() const {
  return worker_ ? worker_->pid() : -1;
}

std::vector<std::string> WarmWorkerRunner::worker_args() const {
  std::vector<std::string> args = {"-m", "gpuemu.worker", "--role",
                                   settings_.role == "reference" ? "reference" : "op"};
  if (!settings_.cwd.empty()) args.insert(args.end(), {"--path", settings_.cwd.string()});
  for (const auto& p : settings_.python_path) args.insert(args.end(), {"--path", p.string()});
  if (settings_.framework != config::Framework::numpy) {
    args.insert(args.end(), {"--framework", std::string(config::framework_name(settings_.framework))});
  }
  args.insert(args.end(),
              {"--numpy-bfloat16", std::string(config::numpy_bfloat16_name(settings_.numpy_bfloat16))});
  if (runnable_.kind == config::Runnable::Kind::callable) {
    args.insert(args.end(), {"--callable", runnable_.module + ":" + runnable_.function});
  } else {
    args.insert(args.end(), {"--script", runnable_.script.string()});
  }
  return args;
}

void WarmWorkerRunner::stop_worker() {
  const pid_t pid = worker_pid();
  worker_.reset();  // the channel's destructor kills the group and reaps
  ready_by_.reset();
  // A worker that was killed could not remove the segments it lent us; our mappings stay valid.
  if (pid > 0) wire::remove_segments_of(pid);
  cases_on_worker_ = 0;
}

void WarmWorkerRunner::fail_with_exit(RunOutcome& outcome, const std::string& when) {
  ExitStatus status = worker_->stop();
  outcome.failure = RunFailure::crashed;
  std::string how = status.signaled ? "was " + describe_signal(status.signal)
                    : status.exited ? fmt::format("exited with code {}", status.code)
                                    : std::string("closed its output");
  outcome.message = fmt::format("{} worker {} {}; a new worker starts for the next case", what_, how, when);
}

SpawnSpec WarmWorkerRunner::spawn_spec() const {
  SpawnSpec spec;
  spec.argv = {settings_.python};
  for (auto& a : worker_args()) spec.argv.push_back(std::move(a));
  spec.cwd = settings_.cwd;
  spec.extra_env = python_env(settings_);
  // Importing torch was most of a pytorch op's worker start (~2 s of CPU each), and Triton most of what
  // was left under its interpreter (docs/worker-protocol.md, "Preloading a framework").
  if (settings_.framework == config::Framework::pytorch) {
    spec.preload = {"torch"};
    if (settings_.triton_interpret) spec.preload.emplace_back("triton");
  }
  return spec;
}

bool WarmWorkerRunner::spawn_worker(RunOutcome& outcome) {
  const SpawnSpec spec = spawn_spec();
  auto channel = WorkerChannel::start(spec, settings_.stderr_tail, what_ + " worker");
  if (!channel) {
    outcome.failure = RunFailure::start_failed;
    outcome.message = fmt::format("{} worker could not be started: {}", what_, channel.error().message);
    return false;
  }
  worker_ = std::move(*channel);
  ++workers_started_;
  cases_on_worker_ = 0;
  ready_by_ = Clock::now() + settings_.timeout;
  return true;
}

void WarmWorkerRunner::warm_up() {
  if (worker_) return;
  if (!interpreter_ok_) {
    if (check_interpreter(settings_)) return;  // the first run reports the missing interpreter
    interpreter_ok_ = true;
  }
  RunOutcome not_started;
  spawn_worker(not_started);  // a failure to spawn is met again, and reported, by the first run
}

bool WarmWorkerRunner::await_ready(RunOutcome& outcome, Clock::time_point counted_from) {
  const Clock::time_point ready_by = *ready_by_;
  ready_by_.reset();
  wire::IncomingFrame hello;
  auto status = worker_->exchange(nullptr, hello, ready_by, kMaxControlFrame);
  const std::string type = status == WorkerChannel::Status::ok ? string_field(hello.header, "type") : "";
  if (type == "ready") {
    if (auto it = hello.header.find("load_ns"); it != hello.header.end() && it->is_number_unsigned()) {
      // The import ended about when the ready frame came; its start is load_ns before that. A worker
      // started ahead (warm_up) imported partly or wholly while the case before ran: only the part
      // after `counted_from` is this case's time.
      const auto ready_at = Clock::now();
      const auto load =
          std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(it->get<std::uint64_t>()));
      const auto load_from = std::min(ready_at, std::max(ready_at - load, counted_from));
      pending_load_ = std::chrono::duration_cast<std::chrono::nanoseconds>(ready_at - load_from);
      load_span_ = util::span_from(load_from, pending_load_);
    }
    runtime_ = wire::runtime_of(hello.header);
    const auto mapped = hello.header.find("mapped_inputs");
    maps_inputs_ =
        !input_files_refused_ && mapped != hello.header.end() && mapped->is_boolean() && mapped->get<bool>();
    const auto outputs = hello.header.find("mapped_outputs");
    maps_outputs_ = outputs != hello.header.end() && outputs->is_boolean() && outputs->get<bool>();
    return true;
  }

  outcome.stderr_tail = shown_stderr(worker_->stderr_tail().str(), worker_->stderr_tail().total());
  if (type == "fatal") {
    // The worker itself runs but cannot load the code: the user's import error (kind "load"), or
    // kind "environment": the op's framework is not installed, the device asked for is missing or
    // a flag is wrong (docs/worker-protocol.md "fatal"), which no case can fix.
    const bool environment = string_field(hello.header, "kind") == "environment";
    outcome.failure = environment ? RunFailure::start_failed : RunFailure::crashed;
    outcome.message =
        fmt::format("{} could not be loaded: {}", what_, first_line(string_field(hello.header, "error")));
    outcome.stderr_tail = with_traceback(outcome.stderr_tail, string_field(hello.header, "traceback"));
    stop_worker();
    return false;
  }
  if (status == WorkerChannel::Status::timed_out) {
    outcome.failure = RunFailure::timed_out;
    outcome.message = fmt::format("{} worker was not ready within {}; its process group was killed", what_,
                                  format_seconds(settings_.timeout));
    stop_worker();
    return false;
  }
  if (status == WorkerChannel::Status::exited) {
    fail_with_exit(outcome, "before it was ready");
    outcome.stderr_tail = shown_stderr(worker_->stderr_tail().str(), worker_->stderr_tail().total());
    const std::string& err = outcome.stderr_tail;
    if (err.find("gpuemu.worker") != std::string::npos ||
        err.find("No module named 'gpuemu'") != std::string::npos) {
      outcome.failure = RunFailure::start_failed;
      outcome.message = fmt::format(
          "{} cannot import gpuemu.worker: install the gpuemu Python package "
          "(pip install ./python) or set GPUEMU_PACKAGE_DIR to the folder holding it",
          settings_.python);
    }
    stop_worker();
    return false;
  }
  outcome.failure = RunFailure::bad_output;
  outcome.message = status == WorkerChannel::Status::ok
                        ? fmt::format("{} worker greeted with a '{}' frame instead of 'ready'", what_, type)
                        : fmt::format("{} worker did not start cleanly: {}", what_, worker_->error());
  stop_worker();
  return false;
}

RunOutcome WarmWorkerRunner::run(const RunRequest& request) {
  const auto start = Clock::now();
  RunOutcome outcome;
  if (!interpreter_ok_) {
    if (auto missing = check_interpreter(settings_)) return *missing;
    interpreter_ok_ = true;
  }
  // A worker not yet ready keeps what it printed while loading: that belongs to this case's tail.
  if (worker_ && !ready_by_) worker_->stderr_tail().clear();
  if ((!worker_ && !spawn_worker(outcome)) || (ready_by_ && !await_ready(outcome, start))) {
    outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return outcome;
  }

  static const Tensors kNoInputs;
  static const std::vector<std::string> kNoOrder;
  static const nlohmann::json kNoKwargs = nlohmann::json::object();
  const std::vector<std::string> released = releases_->take();
  wire::IncomingFrame reply;
  const auto case_start = Clock::now();
  const CaseDeadline deadline = case_deadline(case_start, settings_.timeout, request.stop_at);
  // Our file for the outputs, when the worker writes into one (else it lends its own segments).
  const std::shared_ptr<wire::SharedFile> output_file = maps_outputs_ ? output_files_.offer() : nullptr;
  auto call_worker = [&](wire::InputFiles input_files) {
    wire::OutgoingFrame call = wire::encode_call_frame(
        request.op, request.case_dtype, request.inputs ? *request.inputs : kNoInputs,
        request.input_order ? *request.input_order : kNoOrder, request.kwargs ? *request.kwargs : kNoKwargs,
        &released, input_files, output_file.get(), request.seed);
    return worker_->exchange(&call, reply, deadline.at, settings_.max_output_bytes);
  };
  auto status = call_worker(maps_inputs_ ? wire::InputFiles::name_file : wire::InputFiles::send_bytes);
  if (maps_inputs_ && status == WorkerChannel::Status::ok && string_field(reply.header, "type") == "error" &&
      string_field(reply.header, "kind") == "input_file") {
    // The worker cannot open our input file (docs/worker-protocol.md "Inputs in gpuemu's file"):
    // the same call again with the bytes in the payload, and so from now on for this runner.
    input_files_refused_ = true;
    maps_inputs_ = false;
    status = call_worker(wire::InputFiles::send_bytes);
  }
  auto stderr_text = [&] {
    return shown_stderr(worker_->stderr_tail().str(), worker_->stderr_tail().total());
  };

  switch (status) {
    case WorkerChannel::Status::ok: {
      const std::string type = string_field(reply.header, "type");
      outcome.stderr_tail = stderr_text();
      if (type == "result" || type == "error") {
        wire::ReplyExtras extras = wire::reply_extras(reply.header);
        outcome.inside = extras.inside + pending_load_;
        if (pending_load_.count() > 0) outcome.spans.push_back(load_span_);
        outcome.spans.push_back(wire::call_span(extras, Clock::now()));
        pending_load_ = std::chrono::nanoseconds(0);
        if (!extras.runtime.is_null()) runtime_ = std::move(extras.runtime);
        outcome.runtime = runtime_;
        outcome.launches = std::move(extras.launches);
      }
      if (type == "result") {
        auto outputs = wire::decode_result_frame(reply, what_, releases_, output_file);
        std::uint64_t output_bytes = 0;
        if (outputs) {
          for (const auto& [name, t] : *outputs) output_bytes += t.data.size();
          if (output_file) output_files_.needed(output_bytes + 64 * outputs->size());  // each 64-byte aligned
        }
        if (outputs && output_bytes > settings_.max_output_bytes) {  // the pipe's limit, for segments too
          outcome.failure = RunFailure::bad_output;
          outcome.message = fmt::format("{} returned {} bytes of outputs, more than the limit of {}", what_,
                                        output_bytes, settings_.max_output_bytes);
        } else if (outputs) {
          outcome.outputs = std::move(*outputs);
        } else {
          outcome.failure = RunFailure::bad_output;
          outcome.message = outputs.error().message;
        }
      } else if (type == "error" && string_field(reply.header, "kind") == "environment") {
        // The call cannot run on this machine at all (docs/worker-protocol.md "error"): like a
        // framework that is not installed, the run stops instead of failing every case.
        outcome.failure = RunFailure::start_failed;
        outcome.message = fmt::format("{} cannot run on this machine: {}", what_,
                                      first_line(string_field(reply.header, "error")));
        outcome.stderr_tail = with_traceback(outcome.stderr_tail, string_field(reply.header, "traceback"));
      } else if (type == "error" && !string_field(reply.header, "failure").empty()) {
        // The worker judged the call itself (an input written, an out-of-bounds access, a construct the
        // interpreter cannot run): its message stands as the case's, under the kind it named.
        outcome.failure = RunFailure::crashed;
        outcome.failure_kind = string_field(reply.header, "failure");
        outcome.message = first_line(string_field(reply.header, "error"));
        outcome.stderr_tail = with_traceback(outcome.stderr_tail, string_field(reply.header, "traceback"));
      } else if (type == "error") {
        outcome.failure = RunFailure::crashed;
        outcome.message = fmt::format("{} raised {}", what_, first_line(string_field(reply.header, "error")));
        outcome.stderr_tail = with_traceback(outcome.stderr_tail, string_field(reply.header, "traceback"));
      } else {
        outcome.failure = RunFailure::bad_output;
        outcome.message = fmt::format("{} worker answered a call with a '{}' frame", what_, type);
        stop_worker();
      }
      break;
    }
    case WorkerChannel::Status::timed_out: {
      // The whole case was the op's (or the reference's) time, not gpuemu's.
      outcome.inside = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - case_start);
      const std::string where =
          deadline.by_budget ? std::string() : worker_->where_stopped(kWhereStoppedGrace);
      worker_->stop();
      outcome.stderr_tail = stderr_text();
      if (deadline.by_budget) {
        outcome.failure = RunFailure::cut;
        outcome.message = cut_message(
            what_, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - case_start));
        stop_worker();
        break;
      }
      outcome.failure = RunFailure::timed_out;
      outcome.message = fmt::format(
          "{} timed out after {}{}; the worker's whole process group was killed "
          "and a new worker starts for the next case",
          what_, format_seconds(settings_.timeout), where.empty() ? std::string() : ", stopped at " + where);
      stop_worker();
      break;
    }
    case WorkerChannel::Status::exited:
      fail_with_exit(outcome, "during the case");
      outcome.stderr_tail = stderr_text();
      stop_worker();
      break;
    case WorkerChannel::Status::overflow:
      outcome.failure = RunFailure::bad_output;
      outcome.message = fmt::format("{} replied with more than {} bytes; the worker was killed", what_,
                                    settings_.max_output_bytes);
      worker_->stop();
      outcome.stderr_tail = stderr_text();
      stop_worker();
      break;
    case WorkerChannel::Status::bad_frame:
      outcome.failure = RunFailure::bad_output;
      outcome.message = worker_->error();
      worker_->stop();
      outcome.stderr_tail = stderr_text();
      stop_worker();
      break;
  }
  if (worker_ && ++cases_on_worker_ >= std::max(1, settings_.worker_max_cases)) stop_worker();
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return outcome;
}

}  // namespace gpuemu::proc
