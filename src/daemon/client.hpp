// A synchronous client of the daemon (docs/protocol.md): one REQ socket, one request at a time.
// The CLI uses it for `daemon status|stop` and the --daemon mode; tests use it too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/codec.hpp"

namespace gpuemu::daemon {

class Client {
 public:
  // Dials the socket. Errors (environment) when no daemon listens there, saying how to start one.
  static Expected<Client> connect(const std::string& url, int timeout_ms = 30000);
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  // Sends bytes, returns the reply's bytes. Errors (environment) on timeouts and lost daemons.
  Expected<std::string> exchange(const std::string& request, int timeout_ms = -1);
  // Sends a request (protocol_version is added) and decodes the reply; an error reply becomes an
  // Error whose message is the daemon's (kind: usage for bad_request, config for config, else io).
  Expected<Message> request(nlohmann::json header,
                            const std::vector<std::pair<std::string, const tensor::Tensor*>>& tensors = {},
                            int timeout_ms = -1);

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuemu::daemon
