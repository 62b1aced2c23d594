// The requests the daemon answers, one row each (docs/protocol.md "The requests"); handlers live
// in one file per group (handlers_*.cpp). handle_message turns any failure into an error reply.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "daemon/request.hpp"
#include "daemon/state.hpp"

namespace gpuemu::daemon {

using Handler = Result<Reply> (*)(DaemonState& state, Message& message, const Fields& fields);

struct RequestRow {
  std::string_view type;
  Handler handler;
  // Runs many cases (fuzz, test, minimize, ...): the server gives it a thread of its own so the
  // workers stay free for short requests.
  bool long_running = false;
};

std::span<const RequestRow> request_table();

// Decodes, checks the version, dispatches and encodes the reply. Never throws: malformed bytes,
// unknown requests, handler errors and exceptions all become error replies.
std::string handle_message(DaemonState& state, std::span<const std::byte> bytes,
                           std::shared_ptr<const void> keeper = nullptr);

// Whether the message is a request of a long-running type (reads only the prefix and the header;
// anything unreadable is not long: handle_message answers it at once).
bool is_long_running(std::span<const std::byte> bytes);

// An error reply to a message the server refuses without handling it (e.g. `busy`), with the
// message's type and id when its header can be read.
std::string refusal_reply(std::span<const std::byte> bytes, const RequestError& error);

// An encoded error reply (handle_message and refusal_reply build theirs with it, also for a message
// whose header cannot be read; the server itself calls those two).
std::string error_reply(const RequestError& error, const nlohmann::json& request_type,
                        const nlohmann::json& id);

}  // namespace gpuemu::daemon
