// One interface for running an op or a reference on a case's inputs, whatever runs it: a cold
// script per case (ColdScriptRunner) or a warm worker (WarmWorkerRunner, proc/warm_worker.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/vocabulary.hpp"
#include "util/time_spans.hpp"
#include "wire/script_protocol.hpp"

namespace gpuemu::proc {

// Named tensors, as the protocols carry them: a run's inputs and outputs.
using wire::Tensors;

// How an invocation failed. Numbers are persisted: never renumber.
enum class RunFailure : int {
  none = 0,
  crashed = 1,  // non-zero exit or killed by a signal
  timed_out = 2,
  bad_output = 3,    // unparsable stdout, invalid tensor, too large
  start_failed = 4,  // interpreter missing etc.
  cut = 5,           // stopped at the run's time budget (RunRequest::stop_at), not the case's fault
};

struct RunOutcome {
  RunFailure failure = RunFailure::none;
  Tensors outputs;
  std::string message;      // one line: what happened
  std::string stderr_tail;  // the script's stderr (bounded)
  std::chrono::milliseconds elapsed{0};
  // Time inside the user's code as the worker or script measured it: the call, plus importing
  // the code on a warm worker's first case. Cold scripts that do not use gpuemu.script report
  // nothing: their whole process time counts (docs/result-json.md, "timing").
  std::chrono::nanoseconds inside{0};
  // When that time was, on the steady clock: the call, and the import on a first case. The engine
  // runs the op and the reference at the same time and counts their overlap once (op_session.cpp).
  std::vector<util::TimeSpan> spans;
  // What ran, as the worker or script reported it: {"framework", "version", "device",
  // "triton", "pallas"} (docs/worker-protocol.md); null when it reported nothing.
  nlohmann::json runtime;
  // The case failure kind the worker named for a failed call ("failure" of an error frame,
  // docs/worker-protocol.md): input_mutated, output_aliased, out_of_bounds, interpreter_unsupported.
  // Empty: a plain error (op_error / reference_error).
  std::string failure_kind;
  // The op's @triton.jit launches in this call, per kernel, as its worker or script counted them under
  // the Triton interpreter ("launches", docs/worker-protocol.md); unset when it counted none.
  std::optional<std::map<std::string, std::int64_t>> launches;
  bool ok() const { return failure == RunFailure::none; }
};

struct RunRequest {
  std::string op;                                     // op name, for messages
  tensor::DType case_dtype = tensor::DType::float32;  // sent as "dtype" so helpers encode outputs
  const Tensors* inputs = nullptr;
  const std::vector<std::string>* input_order = nullptr;
  const nlohmann::json* kwargs = nullptr;
  // The whole run's time budget (`ci run`'s [ci] thorough_timeout): a case still running then is
  // killed like a timed-out one but reported as RunFailure::cut. Unset: only the case timeout holds.
  std::optional<std::chrono::steady_clock::time_point> stop_at;
  // The case's seed, sent as "seed" (a decimal string) so the worker can seed what it randomizes
  // for the case (the Triton sanitizer's program order and poison) and a replay does the same.
  std::optional<std::uint64_t> seed{};
};

// The moment a case must end: its own timeout from `start`, or the run's stop_at when sooner
// (then `by_budget` is set, so a kill reads as a cut rather than a timeout).
struct CaseDeadline {
  std::chrono::steady_clock::time_point at;
  bool by_budget = false;
};
CaseDeadline case_deadline(std::chrono::steady_clock::time_point start, std::chrono::milliseconds timeout,
                           const std::optional<std::chrono::steady_clock::time_point>& stop_at);

class Runner {
 public:
  virtual ~Runner() = default;
  virtual RunOutcome run(const RunRequest& request) = 0;
  // Starts what the first run() would start (a warm worker) without waiting for it, so that its
  // start overlaps the caller's other work; that run() reports any failure to start. No-op default.
  virtual void warm_up() {}
};

struct RunnerSettings {
  std::string python = "python3";  // interpreter; GPUEMU_PYTHON overrides config
  // What a launcher shim that `python` went through set in its interpreter's environment
  // (proc/interpreter.hpp): given to this runner's processes, before python_env's own variables.
  std::vector<std::pair<std::string, std::string>> interpreter_env;
  std::filesystem::path cwd;  // the project root
  std::vector<std::filesystem::path> python_path;
  std::chrono::milliseconds timeout{60000};
  int worker_max_cases = 1000;
  std::string role;  // "op" or "reference", for messages
  // Directory holding the gpuemu Python package (gpuemu/worker.py), prepended to PYTHONPATH so
  // workers and scripts can import it; empty = python_package_dir().
  std::filesystem::path package_dir;
  std::size_t stderr_tail = 16 * 1024;        // bytes of a script's or worker's stderr kept per case
  std::size_t max_output_bytes = 1ull << 30;  // larger stdout or reply frames are bad_output
  // The tensors the callable receives and may return: the worker's --framework, the cold
  // request's "framework" (docs/worker-protocol.md, docs/script-protocol.md).
  config::Framework framework = config::Framework::numpy;
  // How a numpy callable gets a bfloat16 case: the worker's --numpy-bfloat16, the cold request's
  // "numpy_bfloat16"; always sent, so Python's own default (float32, for engines that say
  // nothing) never applies to gpuemu's runs.
  config::NumpyBfloat16 numpy_bfloat16 = config::NumpyBfloat16::ml_dtypes;
  // Resolved interpreter choices (proc/interpret.hpp), put in the environment of this runner's
  // processes only: TRITON_INTERPRET and GPUEMU_PALLAS_INTERPRET, "1" or "0".
  bool triton_interpret = false;
  bool pallas_interpret = false;
  // GPUEMU_TRITON_CUDA_SHIM: the op's interpreter_cuda_shim (python/gpuemu/frameworks/_triton_compat.py).
  bool triton_cuda_shim = false;
  // GPUEMU_SANITIZE=1 in this runner's processes when triton_interpret is too: the Triton sanitizer
  // for an op whose kernels run under the interpreter (docs/frameworks.md, "The sanitizer").
  bool sanitize = false;
  // GPUEMU_REQUIRE_LAUNCH=1 in this runner's processes when triton_interpret is too: a call that
  // launches no @triton.jit kernel fails as kernel_not_launched (docs/frameworks.md, "Launches").
  bool require_launch = false;
  // Threads for the thread pools of this runner's processes (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
  // MKL_NUM_THREADS), given only when gpuemu's environment sets none of them; 0 gives nothing.
  int pool_threads = 0;
  // GPUEMU_AUTOTUNE_PIN for an autotune variant's op worker: JSON {kernel: config label}
  // (python/gpuemu/frameworks/triton_autotune.py); empty sets nothing.
  std::string autotune_pin;
};

// Where the gpuemu Python package lives: $GPUEMU_PACKAGE_DIR, else a python/ folder with
// gpuemu/worker.py next to (or a few levels above) the running executable, else
// <prefix>/share/gpuemu/python. Empty when none exists (an installed package is then used).
std::filesystem::path python_package_dir();

// Makes the runner for a Runnable: a script runs cold unless persistent; callables run warm.
std::unique_ptr<Runner> make_runner(const config::Runnable& runnable, const RunnerSettings& settings);

// Starts, on a thread of its own, the fork server that make_runner's warm worker for `runnable` will be
// forked from, so the server's imports (torch, Triton: seconds) overlap the load check instead of
// following it. Nothing for a cold script, or when fork servers are off or that server exists.
void start_fork_server_ahead(const config::Runnable& runnable, const RunnerSettings& settings);

// How the engine gets its runners: make_runner, unless a test injects fakes that answer from
// canned functions (the one seam between the engine and real processes; settings.role says
// whether the op or the reference is wanted). Empty means make_runner.
using RunnerFactory =
    std::function<std::unique_ptr<Runner>(const config::Runnable& runnable, const RunnerSettings& settings)>;

}  // namespace gpuemu::proc
