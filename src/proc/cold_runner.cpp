// ColdScriptRunner: one subprocess per case (cold_runner.hpp), failures mapped to RunOutcome.
#include "proc/cold_runner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "proc/process.hpp"
#include "proc/runner_common.hpp"

namespace gpuemu::proc {

ColdScriptRunner::ColdScriptRunner(config::Runnable runnable, RunnerSettings settings)
    : runnable_(std::move(runnable)), settings_(std::move(settings)) {
  what_ = describe_runnable(runnable_, settings_);
}

RunOutcome ColdScriptRunner::run(const RunRequest& request) {
  if (!interpreter_ok_) {
    if (auto missing = check_interpreter(settings_)) return *missing;
    interpreter_ok_ = true;
  }
  static const Tensors kNoInputs;
  static const std::vector<std::string> kNoOrder;
  static const nlohmann::json kNoKwargs = nlohmann::json::object();

  ProcessSpec spec;
  spec.argv = {settings_.python, runnable_.script.string()};
  spec.cwd = settings_.cwd;
  const Tensors& inputs = request.inputs ? *request.inputs : kNoInputs;
  const bool bfloat16 =
      request.case_dtype == tensor::DType::bfloat16 || std::ranges::any_of(inputs, [](const auto& named) {
        return named.second.dtype == tensor::DType::bfloat16;
      });
  spec.extra_env = bfloat16 ? bfloat16_script_env(settings_) : python_env(settings_);
  spec.stdin_data = wire::encode_request(inputs, request.input_order ? *request.input_order : kNoOrder,
                                         request.kwargs ? *request.kwargs : kNoKwargs, request.case_dtype,
                                         config::framework_name(settings_.framework),
                                         config::numpy_bfloat16_name(settings_.numpy_bfloat16), request.seed);
  const auto start = std::chrono::steady_clock::now();
  const CaseDeadline deadline = case_deadline(start, settings_.timeout, request.stop_at);
  spec.timeout = std::max(std::chrono::milliseconds(0),
                          std::chrono::duration_cast<std::chrono::milliseconds>(deadline.at - start));
  spec.max_stdout = settings_.max_output_bytes;
  spec.stderr_tail = settings_.stderr_tail;

  RunOutcome outcome;
  auto result = run_process(spec);
  if (!result) {
    outcome.failure = RunFailure::start_failed;
    outcome.message = fmt::format("{} could not be started: {}", what_, result.error().message);
    return outcome;
  }
  outcome.elapsed = result->elapsed;
  outcome.stderr_tail = shown_stderr(result->stderr_tail, result->stderr_bytes);
  if (result->timed_out && deadline.by_budget) {
    outcome.failure = RunFailure::cut;
    outcome.message = cut_message(what_, result->elapsed);
  } else if (result->timed_out) {
    outcome.failure = RunFailure::timed_out;
    outcome.message = fmt::format("{} timed out after {}; the whole process group was killed", what_,
                                  format_seconds(settings_.timeout));
  } else if (result->stdout_overflow) {
    outcome.failure = RunFailure::bad_output;
    outcome.message = fmt::format("{} printed more than {} bytes on stdout and was killed", what_,
                                  settings_.max_output_bytes);
  } else if (result->signaled) {
    outcome.failure = RunFailure::crashed;
    outcome.message = fmt::format("{} was {}", what_, describe_signal(result->signal));
  } else if (auto judged =
                 result->exit_code != 0 ? wire::decode_failure_reply(result->stdout_data) : std::nullopt) {
    // gpuemu.script judged the call itself (an input written, ...): its message stands, under the kind it
    // named, as a warm worker's error frame with "failure" does (the engine honours it for the op only).
    outcome.failure = RunFailure::crashed;
    outcome.failure_kind = std::move(judged->kind);
    outcome.message = first_line(judged->error);
  } else if (result->exit_code != 0) {
    outcome.failure = RunFailure::crashed;
    outcome.message = fmt::format("{} exited with code {}", what_, result->exit_code);
  } else if (wire::ReplyExtras extras;
             auto outputs = wire::decode_response(result->stdout_data, what_, &extras)) {
    outcome.outputs = std::move(*outputs);
    // Without gpuemu.script's measurement the whole process is the script's time.
    outcome.inside = extras.inside.count() > 0 ? extras.inside : std::chrono::nanoseconds(result->elapsed);
    extras.inside = outcome.inside;
    outcome.spans = {wire::call_span(extras, std::chrono::steady_clock::now())};
    outcome.runtime = std::move(extras.runtime);
    outcome.launches = std::move(extras.launches);
  } else {
    outcome.failure = RunFailure::bad_output;
    outcome.message = outputs.error().message;
  }
  return outcome;
}

}  // namespace gpuemu::proc
