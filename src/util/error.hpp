// One way to fail: expected failures are values of type gpuemu::Error carried in
// std::expected; TRY passes them up. Fatal errors are caught once at the CLI or daemon top.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace gpuemu {

// What went wrong, which also fixes the process exit code (see exit_code()).
enum class ErrorKind {
  usage,        // bad command line: exit 2
  config,       // bad gpuemu.toml or other user input file: exit 2
  io,           // a file or socket could not be read or written: exit 3
  parse,        // malformed data from a script, a worker, a peer: exit 3
  environment,  // missing interpreter, tool, library: exit 3
  internal,     // a bug in gpuemu: exit 3
};

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string message;  // names the input and the fix; no trailing newline
};

template <class T>
using Expected = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorKind kind, std::string message) {
  return std::unexpected<Error>(Error{kind, std::move(message)});
}

// Process exit codes. Persisted in scripts and CI: never renumber.
enum class ExitCode : int {
  ok = 0,
  check_failed = 1,
  usage_or_config = 2,
  environment = 3,
};

inline ExitCode exit_code(ErrorKind kind) {
  return kind == ErrorKind::usage || kind == ErrorKind::config ? ExitCode::usage_or_config
                                                               : ExitCode::environment;
}

}  // namespace gpuemu

// TRY(expr): evaluates an Expected; returns its error from the enclosing function, or yields
// the value. Uses a GCC/Clang statement expression, which both our compilers support.
#define TRY(...)                                                \
  ({                                                            \
    auto gpuemu_try_result_ = (__VA_ARGS__);                    \
    if (!gpuemu_try_result_) {                                  \
      return std::unexpected(std::move(gpuemu_try_result_).error()); \
    }                                                           \
    *std::move(gpuemu_try_result_);                             \
  })
