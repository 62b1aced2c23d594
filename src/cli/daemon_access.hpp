// The CLI's use of a running daemon (--daemon): requests carry the project's gpuemu.toml so the
// daemon runs exactly what the in-process command would, and replies print the same way.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "daemon/codec.hpp"

namespace gpuemu::cli {

// The gpuemu.toml this command would load (--config, else the nearest one upward), if any.
std::optional<std::filesystem::path> project_file(const Context& context);

// Sends a request to the daemon of $GPUEMU_HOME with "config" set, waiting as long as it takes.
Expected<daemon::Message> daemon_request(Context& context, nlohmann::json header);

}  // namespace gpuemu::cli
