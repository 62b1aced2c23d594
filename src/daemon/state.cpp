// Shared daemon state (state.hpp): config cache and the pool of warm op sessions.
#include "daemon/state.hpp"

#include <fmt/format.h>

#include "config/loader.hpp"
#include "util/suggest.hpp"

namespace gpuemu::daemon {
namespace {

// Idle sessions kept per (config, op); each may hold two warm worker processes.
constexpr std::size_t kMaxIdleSessions = 4;

std::string session_key(const config::Config& config, const config::OpConfig& op) {
  return config.project_file.string() + "\n" + config.digest + "\n" + op.name;
}

}  // namespace

SessionLease::~SessionLease() {
  if (owner_ && session_) owner_->give_back(key_, std::move(config_), std::move(session_));
}

DaemonState::DaemonState(DaemonOptions options, store::Store store)
    : options_(std::move(options)), store_(std::move(store)) {}

Expected<std::unique_ptr<DaemonState>> DaemonState::open(DaemonOptions options) {
  auto store = TRY(store::Store::open(options.db_path));
  return std::unique_ptr<DaemonState>(new DaemonState(std::move(options), std::move(store)));
}

void DaemonState::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

double DaemonState::uptime_secs() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

Result<std::shared_ptr<const config::Config>> DaemonState::config(const nlohmann::json& header) {
  std::filesystem::path file;
  // A path a client sends is opened without following a final symlink (docs/protocol.md).
  util::Symlinks symlinks = util::Symlinks::follow;
  if (auto it = header.find("config"); it != header.end() && !it->is_null()) {
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      return reject(WireError::bad_request, "field \"config\" must be the path of a gpuemu.toml");
    }
    file = it->get<std::string>();
    symlinks = util::Symlinks::refuse;
  } else if (options_.config) {
    file = *options_.config;
  } else {
    return reject(WireError::config,
                  "this request needs a project: send \"config\" (the path of its gpuemu.toml), or "
                  "start the daemon inside the project (gpuemu daemon start) or with --config");
  }
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(file, ec);
  const auto mtime = std::filesystem::last_write_time(absolute, ec);
  if (ec) {
    return reject(WireError::config,
                  fmt::format("config file '{}' cannot be read ({}); send the path of an existing "
                              "gpuemu.toml",
                              file.string(), ec.message()));
  }
  {
    std::lock_guard lock(configs_mutex_);
    if (auto it = configs_.find(absolute); it != configs_.end() && it->second.mtime == mtime)
      return it->second.config;
  }
  config::ConfigSources sources = config::default_sources(absolute);
  sources.project_symlinks = symlinks;
  auto loaded = TRY(config::load_config(sources));
  auto shared = std::make_shared<const config::Config>(std::move(loaded));
  std::lock_guard lock(configs_mutex_);
  configs_[absolute] = {mtime, shared};
  return shared;
}

Result<const config::OpConfig*> DaemonState::op(const config::Config& config, const std::string& name) const {
  if (const auto* op = config.find_op(name)) return op;
  std::vector<std::string> known;
  for (const auto& o : config.ops) known.push_back(o.name);
  return reject(WireError::config,
                fmt::format("unknown op '{}'{} in {}", name, util::did_you_mean_suffix(name, known),
                            config.project_file.string()));
}

SessionLease DaemonState::session(const std::shared_ptr<const config::Config>& config,
                                  const config::OpConfig& op) {
  const std::string key = session_key(*config, op);
  {
    std::lock_guard lock(sessions_mutex_);
    auto it = idle_sessions_.find(key);
    if (it != idle_sessions_.end() && !it->second.empty()) {
      IdleSession idle = std::move(it->second.back());
      it->second.pop_back();
      return SessionLease(this, key, std::move(idle.config), std::move(idle.session));
    }
  }
  return SessionLease(this, key, config, std::make_unique<engine::OpSession>(*config, op));
}

void DaemonState::give_back(const std::string& key, std::shared_ptr<const config::Config> config,
                            std::unique_ptr<engine::OpSession> session) {
  std::unique_ptr<engine::OpSession> dropped;  // destroyed outside the lock: it reaps worker processes
  std::lock_guard lock(sessions_mutex_);
  auto& idle = idle_sessions_[key];
  if (idle.size() >= kMaxIdleSessions || stopping) {
    dropped = std::move(session);
    return;
  }
  idle.push_back({std::move(config), std::move(session)});
}

}  // namespace gpuemu::daemon
