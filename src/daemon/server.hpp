// The NNG REP server (docs/protocol.md "Transport"): worker threads, each with its own REP context,
// and a thread of its own for every long request (fuzz, test, minimize, ...) so that no number of
// them delays a short one (ping). Each request is handled by handle_message, which never throws.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/state.hpp"

namespace gpuemu::daemon {

struct ServerOptions {
  std::string url;  // ipc:///path/gpuemu.sock
  int workers = 8;  // requests served at once
  // Long requests (fuzz, test, ...) running at once; one more is answered `busy`.
  int max_long_requests = 4;
  int ipc_permissions = 0600;
};

class Server {
 public:
  // Opens the REP socket and listens. Errors (io) name the URL and what to do.
  static Expected<std::unique_ptr<Server>> listen(DaemonState& state, const ServerOptions& options);
  ~Server();

  // Starts the worker threads; they stop after state.stopping is set, once their current request
  // is answered.
  void start();
  // Waits for the workers to finish (call after state.stopping is set), then closes the socket.
  void join();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuemu::daemon
