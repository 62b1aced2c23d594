// The CLI's side of --daemon (daemon_access.hpp).
#include "cli/daemon_access.hpp"

#include <filesystem>

#include "config/loader.hpp"
#include "daemon/client.hpp"
#include "daemon/lifecycle.hpp"

namespace gpuemu::cli {

namespace {

// The daemon does not follow a symlink named in a request (docs/protocol.md): send the real path.
std::filesystem::path real_path(const std::filesystem::path& file) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(file, ec);
  return ec ? std::filesystem::absolute(file) : canonical;
}

}  // namespace

std::optional<std::filesystem::path> project_file(const Context& context) {
  if (!context.globals.config_path.empty()) return real_path(context.globals.config_path);
  auto found = config::find_project_file(std::filesystem::current_path());
  if (!found) return std::nullopt;
  return real_path(*found);
}

Expected<daemon::Message> daemon_request(Context& context, nlohmann::json header) {
  TRY(context.config());  // the same diagnostics as in-process, before anything is sent
  if (auto file = project_file(context)) header["config"] = file->string();
  const auto paths = TRY(daemon::daemon_paths());
  auto client = TRY(daemon::Client::connect(paths.url()));
  // Runs take as long as their cases; the daemon answers when done (a day is "no timeout").
  constexpr int kNoTimeoutMs = 24 * 3600 * 1000;
  return client.request(std::move(header), {}, kNoTimeoutMs);
}

}  // namespace gpuemu::cli
