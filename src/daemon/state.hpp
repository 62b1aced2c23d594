// What every request handler shares: the daemon's start time and counters, the store, loaded
// configs (reloaded when their file changes), and warm op sessions kept between requests.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "daemon/request.hpp"
#include "engine/op_session.hpp"
#include "store/store.hpp"

namespace gpuemu::daemon {

struct DaemonOptions {
  std::filesystem::path socket_path;            // shown by ping
  std::filesystem::path db_path;                // the store
  std::optional<std::filesystem::path> config;  // default gpuemu.toml for requests without "config"
  std::function<void(const std::string&)> log;  // one line to the daemon log
};

class DaemonState;

// An op session borrowed from the pool for one request; returned (kept warm) when it goes away.
class SessionLease {
 public:
  SessionLease(DaemonState* owner, std::string key, std::shared_ptr<const config::Config> config,
               std::unique_ptr<engine::OpSession> session)
      : owner_(owner), key_(std::move(key)), config_(std::move(config)), session_(std::move(session)) {}
  SessionLease(SessionLease&&) = default;
  SessionLease& operator=(SessionLease&&) = delete;
  ~SessionLease();
  engine::OpSession& operator*() { return *session_; }
  engine::OpSession* operator->() { return session_.get(); }

 private:
  DaemonState* owner_;
  std::string key_;
  std::shared_ptr<const config::Config> config_;  // keeps the config the session refers to alive
  std::unique_ptr<engine::OpSession> session_;
};

class DaemonState {
 public:
  static Expected<std::unique_ptr<DaemonState>> open(DaemonOptions options);

  // The config a request names ("config"), else the daemon's default; cached, reloaded when the
  // file's modification time changes.
  Result<std::shared_ptr<const config::Config>> config(const nlohmann::json& header);
  // The op of that config, or a config error with a suggestion.
  Result<const config::OpConfig*> op(const config::Config& config, const std::string& name) const;
  // A warm session for (config, op): reused across requests so warm workers stay loaded.
  SessionLease session(const std::shared_ptr<const config::Config>& config, const config::OpConfig& op);

  store::Store& store() { return store_; }
  void log(const std::string& line) const;

  double uptime_secs() const;
  const DaemonOptions& options() const { return options_; }
  std::atomic<int> in_flight{0};
  std::atomic<std::uint64_t> served{0};
  // Set by shutdown and SIGTERM: new requests are refused and running fuzz runs stop early.
  std::atomic<bool> stopping{false};

 private:
  friend class SessionLease;
  DaemonState(DaemonOptions options, store::Store store);
  void give_back(const std::string& key, std::shared_ptr<const config::Config> config,
                 std::unique_ptr<engine::OpSession> session);

  struct LoadedConfig {
    std::filesystem::file_time_type mtime;
    std::shared_ptr<const config::Config> config;
  };
  struct IdleSession {
    std::shared_ptr<const config::Config> config;
    std::unique_ptr<engine::OpSession> session;
  };

  DaemonOptions options_;
  store::Store store_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::mutex configs_mutex_;
  std::map<std::filesystem::path, LoadedConfig> configs_;
  std::mutex sessions_mutex_;
  std::map<std::string, std::vector<IdleSession>> idle_sessions_;
};

}  // namespace gpuemu::daemon
