// The config's words that the process layer (src/proc) speaks too: how an op or reference is named
// (Runnable), its framework, its interpreter mode and its bfloat16 form; the rest is config/config.hpp.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuemu::config {

namespace fs = std::filesystem;

// Numbers are persisted: never renumber.
enum class ExecutionMode : int { script_based = 0, client_side = 1, daemon_orchestrated = 2 };
std::string_view execution_mode_name(ExecutionMode mode);
std::optional<ExecutionMode> parse_execution_mode(std::string_view name);

// The tensors an op's (or reference's) callable receives and may return (docs/frameworks.md).
// Numbers are persisted: never renumber.
enum class Framework : int { numpy = 0, pytorch = 1, jax = 2, tensorflow = 3 };
// Every framework in the enum's order: the one list of framework names. Python's FRAMEWORKS, the
// adapter modules, the result schema and the docs are checked against it (framework_names_test.cpp).
std::span<const Framework> frameworks();
std::string_view framework_name(Framework framework);
std::optional<Framework> parse_framework(std::string_view name);

// Whether an op's Triton kernels (triton_interpret) or Pallas kernels (pallas_interpret) run
// under their CPU interpreter: `automatic` = the interpreter unless the framework sees a GPU.
// Numbers are persisted: never renumber.
enum class InterpretMode : int { automatic = 0, always = 1, never = 2 };
std::string_view interpret_mode_name(InterpretMode mode);
std::optional<InterpretMode> parse_interpret_mode(std::string_view name);

// How a numpy callable receives a bfloat16 case ([project] numpy_bfloat16, docs/configuration.md):
// real ml_dtypes.bfloat16 arrays of the case's bits, or exact float32 arrays (the form gpuemu
// used before ml_dtypes, kept for configs whose numpy code was written for it).
enum class NumpyBfloat16 { ml_dtypes, float32 };
std::string_view numpy_bfloat16_name(NumpyBfloat16 form);
std::optional<NumpyBfloat16> parse_numpy_bfloat16(std::string_view name);

// Where a piece of config came from, for diagnostics later than load time.
struct SourceLocation {
  fs::path file;
  int line = 0;
  int column = 0;
  std::string line_text;  // the source line, so a later diagnostic can quote it with a caret
};

// How an op or reference is run: a script path (cold subprocess per case, or warm when
// persistent) or a "module:function" callable (always warm).
struct Runnable {
  enum class Kind : int { none = 0, script = 1, callable = 2 };
  Kind kind = Kind::none;
  fs::path script;          // absolute, for Kind::script
  std::string module;       // for Kind::callable
  std::string function;     // for Kind::callable
  bool persistent = false;  // scripts only: opt in to warm mode
  std::string spelling;     // as written in the file, for messages and replay commands
  SourceLocation location;  // of the value that named it (not part of the digest)
  bool empty() const { return kind == Kind::none; }
};

}  // namespace gpuemu::config
