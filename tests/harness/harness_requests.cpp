// libFuzzer harness for the daemon's request handlers: each input is one request, handled by
// daemon::handle_message against one real DaemonState (SQLite store, project in a temporary dir).
//
// Input format: the request's JSON header text, then (optionally) a NUL byte and the payload. The
// harness writes the 20-byte prefix with the right lengths, so mutations land in the header's
// fields instead of breaking the framing (harness_ipc attacks the framing itself).
//
// What is reached: every request type of the request table (ping, validate, submit_output,
// get_test_case, get_test_batch, fuzz, test, reproduce, minimize, get_result, list_results,
// list_failures, store_baseline, calibrate, lint, shutdown) with every field as libFuzzer wrote
// it, down to the real engine: cases are generated, the op and reference scripts run as
// subprocesses, results are compared and failures stored in SQLite, stored failures replayed
// and minimized, baselines stored, PTX linted. The project (written at start-up, see kProject)
// has a passing op (`ident`), a failing one (`swapped`, so reproduce and minimize find stored
// failures), a client-side op (`client`) and a `[[kernels]]` entry; its "Python" is `sh` and its
// scripts are one-line `sed` programs that echo an input tensor back, so a case costs two
// fork+exec of sh, not a Python start-up. Config files named by requests: `gpuemu.toml`,
// `broken.toml` (a TOML error), `pipe.toml` (a FIFO) and `zero.toml` (a symlink to /dev/zero)
// exist, so the hardened file reader's refusals are reached too. lint runs the PTX parser and
// policy only: GPUEMU_NVCC/PTXAS/CUOBJDUMP/NVDISASM are "none" (discovering CUDA wheels would
// start python3 on every lint request, and ptxas would take seconds).
//
// What is bounded, and why (each execution must take milliseconds, and nothing may reach outside
// the temporary directory):
// - Work counts are clamped before the request is framed: `iterations` to 3 (fuzz) or 2
//   (calibrate, whose default of 50 becomes 2: one case per stratum), `cases` to 2, `max_iters` to 4
//   (minimize's default of 200 becomes 4), `count` to 64, `jobs` to 1. Values out of the handlers' own ranges
//   (negative, wrong type) pass through unchanged, so the range checks are still attacked; only the upper
//   bounds of the real ranges (1,000,000 iterations, 10,000 batch cases) are not reached.
// - `op_script` and `against` are kept only when they name one of the project's scripts
//   (`op.sh`, `swap.sh`, `ref.sh`) or a missing `nope.sh`; anything else becomes `nope.sh`. A
//   `module:function` would start a Python warm worker (~1 s) and an arbitrary path would run an
//   arbitrary program. So warm workers (and the Python worker protocol) are not reached here:
//   tests/e2e and python/tests cover them.
// - `config` is kept only when it is a bare file name (no `/`), made a path in the temporary
//   directory; anything else becomes `missing.toml` there. The reader's limits on other files are
//   tested by tests/e2e/test_bounded_reads.py.
// - After each input the daemon's `stopping` flag is cleared, so one `shutdown` does not turn
//   every later request into `shutting_down`.
// - handle_message is called directly: the NNG server around it (its threads, the `busy` cap on
//   long requests, cancellation when a client goes) is not reached; tests/e2e/test_hostile_clients.py
//   covers it.
// Oracle: every input gets a reply that decodes; `ok` is a bool; an error reply has a known kind,
// a message, and is never `internal` (the protocol's word for a gpuemu bug: an escaped exception).
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "daemon/codec.hpp"
#include "daemon/request_table.hpp"
#include "daemon/state.hpp"

namespace {

using namespace gpuemu;
namespace fs = std::filesystem;

constexpr std::string_view kProject = R"(# The harness_requests harness's project (tests/harness/harness_requests.cpp).
[project]
name = "harness-requests"

[validation]
dtypes = ["float32"]
seed = 1
timeout = 5
python = "sh"
test_cases = 2
fuzz_iterations = 3
max_case_elements = 4096
max_case_bytes = 65536

[[ops]]
name = "ident"
op_script = "op.sh"
reference = "ref.sh"
dtypes = ["float32", "int32"]
layouts = ["contiguous", "strided"]
[ops.schema]
dims = { M = [1, 8], N = [1, 8] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[[ops]]
name = "swapped"
op_script = "swap.sh"
reference = "ref.sh"
[ops.schema]
dims = { N = [1, 16] }
inputs = { x = ["N"], y = ["N"] }
output = ["N"]

[[ops]]
name = "client"
execution_mode = "client_side"
reference = "ref.sh"
[ops.schema]
dims = { N = [1, 16] }
inputs = { x = ["N"] }
output = ["N"]

[[kernels]]
name = "copy"
source = "copy.ptx"
[kernels.artifact_checks]
max_registers = 8
forbidden_instructions = ["ld.local"]
)";

// The script protocol's request is one line, {"inputs":{"x":{...},"y":{...}},...} with the
// tensors' keys flat (no nested objects): sed prints the first (ref.sh, op.sh) or second input.
constexpr std::string_view kFirstInput = "exec sed -n 's/^{\"inputs\":{\"[^\"]*\":\\({[^}]*}\\).*$/\\1/p'\n";
constexpr std::string_view kSecondInput =
    "exec sed -n 's/^{\"inputs\":{\"[^\"]*\":{[^}]*},\"[^\"]*\":\\({[^}]*}\\).*$/\\1/p'\n";

constexpr std::string_view kPtx = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry copy(.param .u64 copy_param_0, .param .u64 copy_param_1)
{
	.reg .f32 	%f<2>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [copy_param_0];
	ld.param.u64 	%rd2, [copy_param_1];
	ld.global.f32 	%f1, [%rd1];
	st.global.f32 	[%rd2], %f1;
	ret;
}
)";

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) {
    std::fprintf(stderr, "harness_requests: cannot write %s\n", path.c_str());
    std::abort();
  }
}

// The temporary project and the DaemonState over it, made once per process, removed at exit.
class Harness {
 public:
  Harness() {
    std::string pattern = (fs::temp_directory_path() / "gpuemu-harness-requests-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("harness_requests: mkdtemp");
      std::abort();
    }
    dir_ = pattern;
    // No user or daemon config of the machine leaks in, and no GPUEMU_PYTHON overrides "sh".
    ::setenv("HOME", dir_.c_str(), 1);
    ::setenv("GPUEMU_HOME", dir_.c_str(), 1);
    ::setenv("TMPDIR", dir_.c_str(), 1);
    ::unsetenv("GPUEMU_PYTHON");
    // lint would otherwise ask python3 for its site-packages (CUDA wheels) on every request: seconds.
    for (const char* tool : {"GPUEMU_NVCC", "GPUEMU_PTXAS", "GPUEMU_CUOBJDUMP", "GPUEMU_NVDISASM"})
      ::setenv(tool, "none", 1);
    write_file(dir_ / "gpuemu.toml", kProject);
    write_file(dir_ / "broken.toml", "[project\nname = \n");
    write_file(dir_ / "ref.sh", kFirstInput);
    write_file(dir_ / "op.sh", kFirstInput);
    write_file(dir_ / "swap.sh", kSecondInput);
    write_file(dir_ / "copy.ptx", kPtx);
    if (::mkfifo((dir_ / "pipe.toml").c_str(), 0600) != 0 ||
        ::symlink("/dev/zero", (dir_ / "zero.toml").c_str()) != 0) {
      std::perror("harness_requests: setting up the project");
      std::abort();
    }
    daemon::DaemonOptions options;
    options.socket_path = dir_ / "gpuemu.sock";
    options.db_path = dir_ / "gpuemu.db";
    options.config = dir_ / "gpuemu.toml";
    auto state = daemon::DaemonState::open(std::move(options));
    if (!state) {
      std::fprintf(stderr, "harness_requests: %s\n", state.error().message.c_str());
      std::abort();
    }
    state_ = std::move(*state);
  }
  ~Harness() {
    state_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;
  daemon::DaemonState& state() { return *state_; }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  std::unique_ptr<daemon::DaemonState> state_;
};

// Lowers an integer field to `most`; absent fields get `fallback` when it is set (a default that
// would be slow). Anything that is not a positive integer stays as it was, for the range checks.
bool clamp(nlohmann::json& header, const char* key, std::int64_t most, bool set_when_absent = false) {
  auto it = header.find(key);
  if (it == header.end()) {
    if (!set_when_absent) return false;
    header[key] = most;
    return true;
  }
  if (!it->is_number_integer() || it->get<std::int64_t>() <= most) return false;
  *it = most;
  return true;
}

bool confine(nlohmann::json& header, const char* key, std::span<const std::string_view> allowed,
             std::string_view replacement) {
  auto it = header.find(key);
  if (it == header.end() || !it->is_string()) return false;
  const auto& value = it->get_ref<const std::string&>();
  for (auto name : allowed) {
    if (value == name) return false;
  }
  *it = replacement;
  return true;
}

// A bare file name is made a path in the project's directory (the harness never changes its
// working directory: libFuzzer reads the corpus and writes artifacts by relative paths).
bool confine_config(nlohmann::json& header, const fs::path& dir) {
  auto it = header.find("config");
  if (it == header.end() || !it->is_string()) return false;
  const auto& value = it->get_ref<const std::string&>();
  const bool bare = !value.empty() && value.find('/') == std::string::npos && value != "." && value != "..";
  *it = (dir / (bare ? value : std::string("missing.toml"))).string();
  return true;
}

// Applies the bounds of the header comment; true when the header changed.
bool bound(nlohmann::json& header, const fs::path& dir) {
  static constexpr std::array<std::string_view, 4> kScripts = {"op.sh", "swap.sh", "ref.sh", "nope.sh"};
  bool changed = confine_config(header, dir);
  changed |= confine(header, "op_script", kScripts, "nope.sh");
  changed |= confine(header, "against", kScripts, "nope.sh");
  std::string type;
  if (auto it = header.find("type"); it != header.end() && it->is_string()) type = it->get<std::string>();
  changed |= clamp(header, "iterations", type == "calibrate" ? 2 : 3, type == "calibrate");
  changed |= clamp(header, "cases", 2);
  changed |= clamp(header, "max_iters", 4, type == "minimize");
  changed |= clamp(header, "count", 64);
  changed |= clamp(header, "jobs", 1);
  return changed;
}

std::string frame(std::string_view header, std::string_view payload) {
  std::string out = "GEMU";
  auto put = [&out](std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  };
  put(1, 4);
  put(header.size(), 4);
  put(payload.size(), 8);
  out += header;
  out += payload;
  return out;
}

void check_reply(const std::string& reply) {
  auto decoded = daemon::decode_message(std::as_bytes(std::span(reply)));
  if (!decoded) {
    std::fprintf(stderr, "harness_requests: the reply does not decode: %s\n", decoded.error().message.c_str());
    std::abort();
  }
  const auto& header = decoded->header;
  // GPUEMU_HARNESS_REQUESTS_VERBOSE=1: each reply's header on stderr, to see what seeds reach.
  static const bool verbose = std::getenv("GPUEMU_HARNESS_REQUESTS_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "reply: %.400s\n", header.dump().c_str());
  const auto ok = header.find("ok");
  if (ok == header.end() || !ok->is_boolean()) {
    std::fprintf(stderr, "harness_requests: a reply without \"ok\": %s\n", header.dump().c_str());
    std::abort();
  }
  if (ok->get<bool>()) return;
  const auto& error = header.value("error", nlohmann::json::object());
  const auto kind = error.value("kind", std::string());
  const auto message = error.value("message", std::string());
  const auto parsed = daemon::parse_wire_error(kind);
  if (!parsed || message.empty() || *parsed == daemon::WireError::internal) {
    std::fprintf(stderr, "harness_requests: error reply of kind '%s': %s\n", kind.c_str(), message.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness harness;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nul = input.find('\0');
  std::string header_text(input.substr(0, nul));
  const std::string_view payload = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  auto header = nlohmann::json::parse(header_text, nullptr, false);
  if (header.is_object() && bound(header, harness.dir()))
    header_text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string message = frame(header_text, payload);
  check_reply(daemon::handle_message(harness.state(), std::as_bytes(std::span(message))));
  harness.state().stopping = false;
  return 0;
}
