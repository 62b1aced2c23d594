// `gpuemu daemon start [--background] | stop | status | logs`: the daemon of docs/protocol.md,
// one per $GPUEMU_HOME (socket, pid file and logs live there).
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>

#include "cli/command.hpp"
#include "cli/daemon_access.hpp"
#include "daemon/client.hpp"
#include "daemon/lifecycle.hpp"
#include "platform/platform.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

class DaemonStartCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_flag("--background", background_,
                 "Detach and return once the daemon answers (logs go to the log file)");
  }
  Expected<ExitCode> run(Context& context) override {
    const auto paths = TRY(daemon::daemon_paths());
    const auto config = project_file(context);
    if (background_) {
      std::vector<std::string> argv = {platform::executable_path().string()};
      if (config) argv.insert(argv.end(), {"--config", config->string()});
      argv.insert(argv.end(), {"daemon", "start"});
      const pid_t pid = TRY(daemon::start_background(paths, argv));
      if (context.globals.format == "json") {
        std::cout << util::dump_json(
                         {{"pid", pid}, {"socket", paths.socket.string()}, {"log", paths.log_file.string()}})
                  << "\n";
      } else {
        std::cout << fmt::format("gpuemu daemon started (pid {}) on {}\n", pid, paths.socket.string());
      }
      return ExitCode::ok;
    }
    const char* detached = std::getenv("GPUEMU_DAEMON_BACKGROUND");
    daemon::RunOptions options;
    options.config = config;
    options.log_to_stderr = !(detached && std::string_view(detached) == "1");
    TRY(daemon::run_daemon(paths, options));
    return ExitCode::ok;
  }
  bool background_ = false;
};

class DaemonStopCommand final : public Command {
  void add_options(CLI::App&) override {}
  Expected<ExitCode> run(Context& context) override {
    const auto paths = TRY(daemon::daemon_paths());
    const auto stopped = TRY(daemon::stop_daemon(paths));
    if (context.globals.format == "json") {
      std::cout << util::dump_json({{"stopped", stopped ? nlohmann::json(*stopped) : nlohmann::json()}})
                << "\n";
    } else if (stopped) {
      std::cout << fmt::format("gpuemu daemon (pid {}) stopped\n", *stopped);
    } else {
      std::cout << "no gpuemu daemon is running for " << paths.home.string() << "\n";
    }
    return ExitCode::ok;
  }
};

class DaemonStatusCommand final : public Command {
  void add_options(CLI::App&) override {}
  Expected<ExitCode> run(Context& context) override {
    const auto paths = TRY(daemon::daemon_paths());
    const bool json = context.globals.format == "json";
    auto client = daemon::Client::connect(paths.url(), 5000);
    auto reply = client ? client->request({{"type", "ping"}}, {}, 5000) : std::unexpected(client.error());
    if (!reply) {
      const auto pid = daemon::running_daemon(paths);
      if (json) {
        std::cout << util::dump_json({{"running", false},
                                      {"pid", pid ? nlohmann::json(*pid) : nlohmann::json()},
                                      {"socket", paths.socket.string()},
                                      {"error", reply.error().message}})
                  << "\n";
      } else {
        std::cout << (pid ? fmt::format("gpuemu daemon (pid {}) is not answering on {}: {}\n", *pid,
                                        paths.socket.string(), reply.error().message)
                          : fmt::format("gpuemu daemon is not running (socket {})\n", paths.socket.string()));
      }
      return ExitCode::check_failed;
    }
    nlohmann::json doc = reply->header;
    for (const char* internal : {"ok", "type"}) doc.erase(internal);
    doc["running"] = true;
    doc["log"] = paths.log_file.string();
    if (json) {
      std::cout << util::dump_json(doc) << "\n";
    } else {
      std::cout << fmt::format("gpuemu daemon {} running (pid {}) on {}\n", doc.value("version", "?"),
                               doc.value("pid", 0), paths.socket.string());
      std::cout << fmt::format("  uptime {:.1f} s, {} request(s) served, {} in flight\n",
                               doc.value("uptime_secs", 0.0), doc.value("served", 0),
                               doc.value("in_flight", 0) - 1);
      std::cout << "  log " << paths.log_file.string() << "\n";
    }
    return ExitCode::ok;
  }
};

class DaemonLogsCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("--lines,-n", lines_, "Print the last N lines (default 50; 0 = all)");
  }
  Expected<ExitCode> run(Context&) override {
    const auto paths = TRY(daemon::daemon_paths());
    std::ifstream in(paths.log_file);
    if (!in) {
      return fail(ErrorKind::io,
                  fmt::format("no daemon log at {}; start the daemon with 'gpuemu daemon start'",
                              paths.log_file.string()));
    }
    std::deque<std::string> tail;
    for (std::string line; std::getline(in, line);) {
      tail.push_back(std::move(line));
      if (lines_ > 0 && static_cast<int>(tail.size()) > lines_) tail.pop_front();
    }
    for (const auto& line : tail) std::cout << line << "\n";
    return ExitCode::ok;
  }
  int lines_ = 50;
};

}  // namespace

std::unique_ptr<Command> make_daemon_start_command() {
  return std::make_unique<DaemonStartCommand>();
}
std::unique_ptr<Command> make_daemon_stop_command() {
  return std::make_unique<DaemonStopCommand>();
}
std::unique_ptr<Command> make_daemon_status_command() {
  return std::make_unique<DaemonStatusCommand>();
}
std::unique_ptr<Command> make_daemon_logs_command() {
  return std::make_unique<DaemonLogsCommand>();
}

}  // namespace gpuemu::cli
