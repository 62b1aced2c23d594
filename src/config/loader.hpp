// Reads gpuemu.toml (plus ~/.config/gpuemu/config.toml and $GPUEMU_HOME/daemon.toml) into a
// Config, with diagnostics of the form "path:line:col: message" plus the line, a caret and a hint.
#pragma once

#include <filesystem>
#include <optional>

#include "config/config.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"

namespace gpuemu::config {

// Config files above this are refused before reading (a config is a few KiB; this is a wrong path).
inline constexpr std::uintmax_t kMaxConfigFileBytes = 4u * 1024 * 1024;

struct ConfigSources {
  fs::path project_file;                // required
  std::optional<fs::path> user_file;    // used when it exists
  std::optional<fs::path> daemon_file;  // used when it exists
  // refuse: a project path from a daemon request is opened with O_NOFOLLOW (docs/protocol.md).
  util::Symlinks project_symlinks = util::Symlinks::follow;
};

// The default sources: ~/.config/gpuemu/config.toml and $GPUEMU_HOME/daemon.toml.
ConfigSources default_sources(const fs::path& project_file);

// The nearest gpuemu.toml from `start` upward, or a usage error naming where it looked.
Expected<fs::path> find_project_file(const fs::path& start);

// Parse, merge, validate. Errors are ErrorKind::config with the full diagnostic as message.
Expected<Config> load_config(const ConfigSources& sources);

// Parse a single TOML text as a project file (tests, and the daemon's inline configs).
Expected<Config> load_config_text(std::string_view text, const fs::path& pretend_path);

}  // namespace gpuemu::config
