// Fork servers (fork_server.hpp): one per interpreter and start-up environment, started on first
// use and kept for the process's life; a request per worker over a SOCK_SEQPACKET socket with its pipes
// attached.
#include "proc/fork_server.hpp"

#include "platform/platform.hpp"
#include "platform/process_exit.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

extern char** environ;

namespace gpuemu::proc {

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view kWorkerModule = "gpuemu.worker";
constexpr std::string_view kPreloadVariable = "GPUEMU_FORK_SERVER_PRELOAD";
constexpr std::size_t kMaxReply = 64 * 1024;
// A spawn is a fork: milliseconds. A reap follows a SIGKILL. Longer means the server is stuck.
constexpr std::chrono::milliseconds kReplyTimeout{30000};

// A worker command: PYTHON -m gpuemu.worker ARGS..., in a directory that exists (else spawn_child
// says so in its own words).
bool is_worker_command(const SpawnSpec& spec) {
  std::error_code ec;
  return spec.argv.size() >= 3 && spec.argv[1] == "-m" && spec.argv[2] == kWorkerModule &&
         spec.stdin_fd < 0 && (spec.cwd.empty() || std::filesystem::is_directory(spec.cwd, ec));
}

// The environment spawn_child would give the child: ours with `extra` applied.
std::map<std::string, std::string> child_environment(const Env& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq != std::string_view::npos)
      env.insert_or_assign(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  for (const auto& [name, value] : extra) env.insert_or_assign(name, value);
  return env;
}

// What is read once, when Python starts (PYTHONPATH, PYTHONHASHSEED, ...) or when the server
// loads numpy and its BLAS (OPENBLAS_NUM_THREADS, OMP_*, MKL_*, LD_*): a server started with other
// values cannot give a worker these, so they pick the server.
std::string startup_variables(const std::map<std::string, std::string>& env) {
  // TORCH and PYTORCH: read by torch's import, which a server may do for its workers (preload_list).
  constexpr std::array<std::string_view, 8> kPrefixes = {"PYTHON", "OPENBLAS", "OMP_",  "MKL_",
                                                         "LD_",    "NUMPY",    "TORCH", "PYTORCH"};
  std::string joined;
  for (const auto& [name, value] : env) {
    if (std::ranges::any_of(kPrefixes, [&](std::string_view p) { return name.starts_with(p); }))
      joined += name + "=" + value + '\n';
  }
  return joined;
}

// The server's GPUEMU_FORK_SERVER_PRELOAD, comma-separated: the modules the user names in it and the
// worker's own (SpawnSpec::preload), or none when the user's value is "none" (docs/worker-protocol.md).
std::string preload_list(const SpawnSpec& spec, const std::map<std::string, std::string>& environment) {
  std::set<std::string> modules(spec.preload.begin(), spec.preload.end());
  if (auto it = environment.find(std::string(kPreloadVariable)); it != environment.end()) {
    if (it->second == "none") return "";
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      std::string_view name = rest.substr(0, comma);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!name.empty()) modules.emplace(name);
      rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
  }
  std::string joined;
  for (const auto& name : modules) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

bool send_packet(int socket, const std::string& data, std::span<const int> fds) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 3)> control{};
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&msg);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do {
    n = ::sendmsg(socket, &msg, platform::send_without_sigpipe_flag());
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(data.size());
}

// One reply packet as JSON; discarded (null) on timeout, end of stream or garbage.
nlohmann::json receive_packet(int socket, std::chrono::milliseconds timeout) {
  pollfd p{socket, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return nullptr;
  std::string buffer(kMaxReply, '\0');
  ssize_t n;
  do {
    n = ::recv(socket, buffer.data(), buffer.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return nullptr;
  buffer.resize(static_cast<std::size_t>(n));
  auto reply = nlohmann::json::parse(buffer, nullptr, false);
  return reply.is_object() ? reply : nlohmann::json(nullptr);
}

struct ChildPipes {
  Fd stdin_r, stdin_w, stdout_r, stdout_w, stderr_r, stderr_w;
};

bool make_pipes(ChildPipes& pipes) {
  std::array<std::pair<Fd*, Fd*>, 3> ends = {{{&pipes.stdin_r, &pipes.stdin_w},
                                              {&pipes.stdout_r, &pipes.stdout_w},
                                              {&pipes.stderr_r, &pipes.stderr_w}}};
  for (auto [read_end, write_end] : ends) {
    int fds[2];
    if (platform::make_pipe(fds) != 0) return false;
    *read_end = Fd(fds[0]);
    *write_end = Fd(fds[1]);
  }
  return true;
}

class ForkServer final : public ForeignReaper, public std::enable_shared_from_this<ForkServer> {
 public:
  // Starts `python -m gpuemu.fork_server` and waits for its ready packet; null if either fails.
  static std::shared_ptr<ForkServer> start(const std::string& python, const Env& extra_env,
                                           std::chrono::milliseconds timeout) {
    int pair[2];
    // No SOCK_SEQPACKET for Unix sockets (macOS): no server; every worker is spawned directly.
    if (platform::make_socketpair(SOCK_SEQPACKET, pair) != 0) return nullptr;
    Fd ours(pair[0]);
    Fd theirs(pair[1]);
    SpawnSpec spec;
    spec.argv = {python, "-m", "gpuemu.fork_server"};
    spec.extra_env = extra_env;
    spec.stdin_fd = theirs.get();
    auto child = spawn_child(spec);
    if (!child) return nullptr;
    theirs.close();
    auto server = std::shared_ptr<ForkServer>(new ForkServer(std::move(ours), std::move(*child)));
    const nlohmann::json ready = receive_packet(server->socket_.get(), timeout);
    if (!ready.is_object() || ready.value("type", "") != "ready") return nullptr;  // the destructor kills it
    return server;
  }

  ~ForkServer() override { shut_down(); }

  // Ends the server and reaps it, so no zombie of ours outlives gpuemu (in a container whose
  // init does not reap orphans, it would stay). Its workers are gpuemu's to kill, and are by then.
  void shut_down() {
    std::lock_guard lock(mutex_);
    discard_locked();
  }

  bool usable() const {
    std::lock_guard lock(mutex_);
    return !broken_;
  }

  // `environment` is the child's whole environment (child_environment of the spec), not a
  // difference: ours may have changed since the server started.
  std::optional<SpawnedChild> spawn(const SpawnSpec& spec,
                                    const std::map<std::string, std::string>& environment) {
    ChildPipes pipes;
    if (!make_pipes(pipes)) return std::nullopt;
    nlohmann::json request = {{"op", "spawn"},
                              {"argv", std::vector<std::string>(spec.argv.begin() + 3, spec.argv.end())},
                              {"cwd", spec.cwd.string()},
                              {"env", environment}};
    const std::array<int, 3> fds = {pipes.stdin_r.get(), pipes.stdout_w.get(), pipes.stderr_w.get()};
    const nlohmann::json reply = call(request, fds);
    if (!reply.contains("pid") || !reply["pid"].is_number_integer()) return std::nullopt;
    SpawnedChild child;
    child.pid = reply["pid"].get<pid_t>();
    child.reaper = shared_from_this();
    // Without an exit watch, nothing but the server could tell that the worker exited.
    child.exit_watch = open_exit_watch(child.pid);
    if (!child.exit_watch.valid()) {
      kill_group(child.pid);
      reap(child.pid);
      return std::nullopt;
    }
    adopt_stdio(child, std::move(pipes.stdin_w), std::move(pipes.stdout_r), std::move(pipes.stderr_r));
    return child;
  }

  ExitStatus reap(pid_t pid) override {
    ExitStatus status;
    const nlohmann::json reply = call({{"op", "reap"}, {"pid", pid}}, {});
    if (!reply.contains("code") || !reply["code"].is_number_integer()) return status;
    const int code = reply["code"].get<int>();
    if (code >= 0) {
      status.exited = true;
      status.code = code;
    } else {
      status.signaled = true;
      status.signal = -code;
    }
    return status;
  }

 private:
  ForkServer(Fd socket, SpawnedChild server) : socket_(std::move(socket)), server_(std::move(server)) {}

  // One request and its reply, one at a time (job threads share the server). A server that does
  // not answer is broken for good: later workers are spawned directly.
  nlohmann::json call(const nlohmann::json& request, std::span<const int> fds) {
    std::lock_guard lock(mutex_);
    if (broken_) return nullptr;
    nlohmann::json reply;
    if (send_packet(socket_.get(), request.dump(), fds)) reply = receive_packet(socket_.get(), kReplyTimeout);
    if (reply.is_null()) discard_locked();
    return reply;
  }

  // Not used again: the server is killed and reaped at once, so a dead one is no zombie of ours
  // for the rest of the run. Its workers are gpuemu's to kill (their process groups are theirs).
  void discard_locked() {
    broken_ = true;
    socket_.close();
    if (server_.pid > 0) {
      kill_group(server_.pid);
      proc::reap(server_.pid);  // our own child, not one of the server's
      server_.pid = -1;
    }
  }

  mutable std::mutex mutex_;
  Fd socket_;
  SpawnedChild server_;
  bool broken_ = false;
};

using ServerKey = std::pair<std::string, std::string>;  // interpreter, startup_variables()

// The servers of this process. A key whose server could not start maps to null: it is not tried
// again (each try would cost a whole interpreter start). At exit every server is shut down.
struct ServerRegistry {
  std::mutex mutex;
  std::map<ServerKey, std::shared_ptr<ForkServer>> servers;
  // Starts begun ahead (start_fork_server_ahead), each on a thread of its own, by key; joined at exit.
  std::map<ServerKey, std::thread> starting;
  ~ServerRegistry() {
    for (auto& [key, thread] : starting) thread.join();
    for (auto& [key, server] : servers) {
      if (server) server->shut_down();
    }
  }
};

ServerRegistry& registry() {
  static ServerRegistry instance;
  return instance;
}

// Workers that need other preloaded modules get a server of their own: a numpy op's workers never
// carry torch because a pytorch op of the same run asked for it.
struct KeyedServer {
  ServerKey key;
  std::string preload;  // the server's GPUEMU_FORK_SERVER_PRELOAD, part of the key
};

KeyedServer key_of(const SpawnSpec& spec, const std::map<std::string, std::string>& environment) {
  std::string preload = preload_list(spec, environment);
  return {{spec.argv[0], startup_variables(environment) + "\npreload=" + preload}, preload};
}

// The server for `keyed`, started now under the registry's lock (a spawn for any key waits for it).
std::shared_ptr<ForkServer> server_for(const KeyedServer& keyed, const SpawnSpec& spec,
                                       std::chrono::milliseconds start_timeout) {
  ServerRegistry& known = registry();
  std::lock_guard lock(known.mutex);
  auto it = known.servers.find(keyed.key);
  if (it == known.servers.end()) {
    Env server_env = spec.extra_env;
    server_env.emplace_back(kPreloadVariable, keyed.preload);
    it =
        known.servers.emplace(keyed.key, ForkServer::start(keyed.key.first, server_env, start_timeout)).first;
  }
  return it->second;
}

}  // namespace

std::optional<SpawnedChild> spawn_from_fork_server(const SpawnSpec& spec,
                                                   std::chrono::milliseconds start_timeout) {
  if (!fork_server_enabled() || !is_worker_command(spec)) return std::nullopt;
  ignore_sigpipe();
  const std::map<std::string, std::string> environment = child_environment(spec.extra_env);
  std::shared_ptr<ForkServer> server = server_for(key_of(spec, environment), spec, start_timeout);
  if (!server || !server->usable()) return std::nullopt;
  return server->spawn(spec, environment);
}

void start_fork_server_ahead(const SpawnSpec& spec) {
  if (!fork_server_enabled() || !is_worker_command(spec)) return;
  ignore_sigpipe();
  const std::map<std::string, std::string> environment = child_environment(spec.extra_env);
  const KeyedServer keyed = key_of(spec, environment);
  ServerRegistry& known = registry();
  std::lock_guard lock(known.mutex);
  if (known.servers.contains(keyed.key) || known.starting.contains(keyed.key)) return;
  known.starting.emplace(keyed.key,
                         std::thread([keyed, spec] { server_for(keyed, spec, kForkServerStart); }));
}

bool fork_server_enabled() {
  // A worker the server forked is not our child: only an exit watch (pidfd, kqueue) sees it end.
  if (!platform::watches_process_exit()) return false;
  const char* flag = std::getenv("GPUEMU_FORK_SERVER");
  return flag == nullptr || std::string_view(flag) != "0";
}

}  // namespace gpuemu::proc
