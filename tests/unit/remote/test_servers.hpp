// Real test servers for the remote store tests, as child processes on 127.0.0.1: the Python
// servers under tests/servers/ (they print their ports as JSON) and nginx with WebDAV.
#pragma once

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"
#include "remote/baseline_store.hpp"

namespace gpuemu::remote::testing {

namespace fs = std::filesystem;

inline fs::path servers_dir() {
  return fs::path(GPUEMU_SOURCE_DIR) / "tests" / "servers";
}

using ::gpuemu::testing::TempDir;

// A child process that is always stopped (SIGTERM, then SIGKILL) when this object goes away.
class Child {
 public:
  // Starts argv with stdout on a pipe; reads the first line (the server's JSON announcement).
  explicit Child(const std::vector<std::string>& argv, bool read_announcement = true) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]);
    stdout_ = ::fdopen(out[0], "r");
    if (read_announcement) {
      char line[4096] = {};
      if (!std::fgets(line, sizeof line, stdout_))
        throw std::runtime_error("server " + argv[1] + " did not start");
      announcement = nlohmann::json::parse(line);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        std::fclose(stdout_);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    std::fclose(stdout_);
  }
  bool running() const { return ::waitpid(pid_, nullptr, WNOHANG) == 0; }

  nlohmann::json announcement;

 private:
  pid_t pid_ = -1;
  std::FILE* stdout_ = nullptr;
};

inline bool port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// A port the kernel just handed out on 127.0.0.1 and that nothing listens on now.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

inline std::unique_ptr<Child> python_server(const std::string& script, std::vector<std::string> args = {}) {
  std::vector<std::string> argv = {"python3", (servers_dir() / script).string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Child>(argv);
}

// nginx from Debian with WebDAV PUT/GET on a random port, its config generated from
// tests/servers/nginx.conf.in into `prefix`. Retries with another port if the first is taken.
class Nginx {
 public:
  Nginx(const fs::path& prefix, const std::string& token) {
    std::ifstream in(servers_dir() / "nginx.conf.in");
    std::stringstream buffer;
    buffer << in.rdbuf();
    for (int attempt = 0; attempt < 5 && !child_; ++attempt) {
      port = free_port();
      std::string conf = buffer.str();
      auto replace = [&](const std::string& key, const std::string& value) {
        for (auto pos = conf.find(key); pos != std::string::npos; pos = conf.find(key, pos + value.size())) {
          conf.replace(pos, key.size(), value);
        }
      };
      replace("@PREFIX@", prefix.string());
      replace("@PORT@", std::to_string(port));
      replace("@TOKEN@", token);
      replace("@USER@", ::getpwuid(::getuid())->pw_name);
      replace("@GROUP@", ::getgrgid(::getgid())->gr_name);
      fs::create_directories(prefix / "dav");
      std::ofstream(prefix / "nginx.conf") << conf;
      auto child =
          std::make_unique<Child>(std::vector<std::string>{"nginx", "-c", (prefix / "nginx.conf").string(),
                                                           "-p", prefix.string(), "-g", "daemon off;"},
                                  false);
      for (int i = 0; i < 200 && child->running() && !port_accepts(port); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
      if (child->running() && port_accepts(port)) child_ = std::move(child);
    }
    if (!child_) throw std::runtime_error("nginx did not start; see " + (prefix / "error.log").string());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  int port = 0;

 private:
  std::unique_ptr<Child> child_;
};

// What a Python test server saw: GET /__stats on `port`.
inline nlohmann::json get_stats(int port) {
  const auto response =
      send({.url = "http://127.0.0.1:" + std::to_string(port) + "/__stats"}, {}, {.attempts = 1}, {});
  if (!response || response->status != 200) throw std::runtime_error("no /__stats");
  return nlohmann::json::parse(response->body);
}

// Store options for tests: no real sleeping (delays are recorded), short timeouts, and every
// log and warning line captured.
struct Captured {
  std::vector<std::string> verbose;
  std::vector<std::string> warnings;
  std::vector<Milliseconds> delays;
  std::string all() const {
    std::string text;
    for (const auto& v : verbose) text += v + "\n";
    for (const auto& w : warnings) text += w + "\n";
    return text;
  }
};

class RecordingSleeper final : public Sleeper {
 public:
  explicit RecordingSleeper(Captured& captured) : captured_(captured) {}
  void sleep(Milliseconds delay) override { captured_.delays.push_back(delay); }

 private:
  Captured& captured_;
};

inline StoreOptions test_options(Captured& captured, Sleeper& sleeper, Env env = {}) {
  StoreOptions options;
  options.env = std::move(env);
  options.retry.sleeper = &sleeper;
  options.retry.jitter = [] { return 0.0; };
  options.retry.base_delay = Milliseconds(100);
  options.limits.connect_timeout = Milliseconds(2000);
  options.limits.total_timeout = Milliseconds(5000);
  options.verbose = [&captured](std::string_view line) { captured.verbose.emplace_back(line); };
  options.warn = [&captured](std::string_view line) { captured.warnings.emplace_back(line); };
  return options;
}

}  // namespace gpuemu::remote::testing
