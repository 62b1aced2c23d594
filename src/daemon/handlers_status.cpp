// The requests about the daemon itself: ping (liveness and version) and shutdown.
#include <unistd.h>

#include "daemon/request_table.hpp"

namespace gpuemu::daemon {

Result<Reply> handle_ping(DaemonState& state, Message&, const Fields&) {
  Reply reply;
  const auto& options = state.options();
  reply.header = {{"version", GPUEMU_VERSION},
                  {"uptime_secs", state.uptime_secs()},
                  {"pid", static_cast<std::int64_t>(::getpid())},
                  {"socket", options.socket_path.string()},
                  {"in_flight", state.in_flight.load()},
                  {"served", state.served.load()},
                  {"stopping", state.stopping.load()},
                  {"config", options.config ? nlohmann::json(options.config->string()) : nlohmann::json()}};
  return reply;
}

Result<Reply> handle_shutdown(DaemonState& state, Message&, const Fields&) {
  // The server sends this reply, lets in-flight requests finish, then exits.
  state.stopping = true;
  state.log("shutdown requested by a client");
  return Reply{};
}

}  // namespace gpuemu::daemon
