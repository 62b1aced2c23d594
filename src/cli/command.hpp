// What a subcommand is: a row in the command table (cli/command_table.cpp) with a name, one line
// of help and a factory; the Command object binds its options and runs against a Context.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "config/config.hpp"
#include "util/error.hpp"

namespace gpuemu::cli {

// Options every command accepts, before or after the subcommand name.
struct GlobalOptions {
  std::string config_path;  // --config; empty = nearest gpuemu.toml upward
  std::string format = "text";
  bool verbose = false;
  bool quiet = false;     // no progress on stderr
  bool no_store = false;  // --no-store: do not record runs in the SQLite store
  bool daemon = false;    // --daemon: run test/fuzz/reproduce through the running daemon
};

// What a command runs against: the global options and, loaded on first use, the config.
class Context {
 public:
  explicit Context(GlobalOptions globals) : globals(std::move(globals)) {}
  GlobalOptions globals;

  // Loads the config once (the --config file, or the nearest gpuemu.toml upward).
  Expected<const config::Config*> config();
  // Expands the config's ops that reach @triton.autotune kernels into one op per config, for a run of
  // `names` (empty: every op); config() returns the expanded config from then on
  // (engine/autotune_variants.hpp). Called by the commands that run cases, before they select ops.
  Expected<void> expand_autotune(const std::vector<std::string>& names);
  // Progress and logs: stderr only, so stdout carries nothing but the requested document.
  void log(std::string_view line) const;
  bool show_progress() const;

 private:
  std::optional<config::Config> config_;
};

class Command {
 public:
  virtual ~Command() = default;
  virtual void add_options(CLI::App& app) = 0;
  virtual Expected<ExitCode> run(Context& context) = 0;
};

struct CommandRow {
  std::string_view path;  // "fuzz", or "report render" for a nested command
  std::string_view help;  // one line
  std::unique_ptr<Command> (*make)();
};

std::span<const CommandRow> command_table();

// Parses an unsigned 64-bit seed given in decimal; `what` names the option in errors.
Expected<std::uint64_t> parse_seed(std::string_view text, std::string_view what);

}  // namespace gpuemu::cli
