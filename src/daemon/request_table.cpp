// The request table and the one place where a request's failure becomes an error reply
// (request_table.hpp). Fatal errors (exceptions) are caught here once per request.
#include "daemon/request_table.hpp"

#include <fmt/format.h>

#include <array>

#include "daemon/codec.hpp"
#include "util/suggest.hpp"
#include "wire/frames.hpp"

namespace gpuemu::daemon {

Result<Reply> handle_ping(DaemonState&, Message&, const Fields&);
Result<Reply> handle_shutdown(DaemonState&, Message&, const Fields&);
Result<Reply> handle_validate(DaemonState&, Message&, const Fields&);
Result<Reply> handle_submit_output(DaemonState&, Message&, const Fields&);
Result<Reply> handle_get_test_case(DaemonState&, Message&, const Fields&);
Result<Reply> handle_get_test_batch(DaemonState&, Message&, const Fields&);
Result<Reply> handle_fuzz(DaemonState&, Message&, const Fields&);
Result<Reply> handle_test(DaemonState&, Message&, const Fields&);
Result<Reply> handle_reproduce(DaemonState&, Message&, const Fields&);
Result<Reply> handle_minimize(DaemonState&, Message&, const Fields&);
Result<Reply> handle_get_result(DaemonState&, Message&, const Fields&);
Result<Reply> handle_list_results(DaemonState&, Message&, const Fields&);
Result<Reply> handle_list_failures(DaemonState&, Message&, const Fields&);
Result<Reply> handle_store_baseline(DaemonState&, Message&, const Fields&);
Result<Reply> handle_calibrate(DaemonState&, Message&, const Fields&);
Result<Reply> handle_lint(DaemonState&, Message&, const Fields&);

namespace {

const std::array kRequests = {
    RequestRow{"ping", &handle_ping},
    RequestRow{"validate", &handle_validate},
    RequestRow{"submit_output", &handle_submit_output},
    RequestRow{"get_test_case", &handle_get_test_case},
    RequestRow{"get_test_batch", &handle_get_test_batch},
    RequestRow{"fuzz", &handle_fuzz, true},
    RequestRow{"test", &handle_test, true},
    RequestRow{"reproduce", &handle_reproduce, true},
    RequestRow{"minimize", &handle_minimize, true},
    RequestRow{"get_result", &handle_get_result},
    RequestRow{"list_results", &handle_list_results},
    RequestRow{"list_failures", &handle_list_failures},
    RequestRow{"store_baseline", &handle_store_baseline},
    RequestRow{"calibrate", &handle_calibrate, true},
    RequestRow{"lint", &handle_lint},
    RequestRow{"shutdown", &handle_shutdown},
};

nlohmann::json field_or_null(const nlohmann::json& header, const char* key) {
  auto it = header.find(key);
  return it == header.end() ? nlohmann::json() : *it;
}

const RequestRow* find_row(std::string_view type) {
  for (const auto& row : kRequests) {
    if (row.type == type) return &row;
  }
  return nullptr;
}

Result<const RequestRow*> check_request(const DaemonState& state, const nlohmann::json& header) {
  const auto version = header.find("protocol_version");
  if (version == header.end() || !version->is_number_integer() ||
      version->get<std::int64_t>() != kProtocolVersion) {
    return reject(
        WireError::protocol_mismatch,
        fmt::format("this daemon speaks protocol_version {}; the request {}: use a client of the same "
                    "gpuemu release",
                    kProtocolVersion,
                    version == header.end() ? std::string("has no protocol_version")
                                            : "has protocol_version " + version->dump()));
  }
  const auto type = header.find("type");
  if (type == header.end() || !type->is_string()) {
    return reject(WireError::bad_request,
                  "the request has no \"type\" string (e.g. \"ping\"; see docs/protocol.md)");
  }
  const auto& name = type->get_ref<const std::string&>();
  const RequestRow* row = find_row(name);
  if (!row) {
    std::vector<std::string> known;
    for (const auto& r : kRequests) known.emplace_back(r.type);
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    return reject(WireError::bad_request, fmt::format("unknown request type '{}'{}; known: {}", name,
                                                      util::did_you_mean_suffix(name, known), list));
  }
  if (state.stopping && row->type != "ping") {
    return reject(WireError::shutting_down,
                  "the daemon is shutting down; start it again with gpuemu daemon start");
  }
  return row;
}

}  // namespace

std::span<const RequestRow> request_table() {
  return kRequests;
}

bool is_long_running(std::span<const std::byte> bytes) {
  if (bytes.size() < wire::kFramePrefixSize) return false;
  std::uint32_t header_bytes = 0;
  for (int i = 3; i >= 0; --i) header_bytes = (header_bytes << 8) | static_cast<std::uint8_t>(bytes[8 + i]);
  if (header_bytes > bytes.size() - wire::kFramePrefixSize) return false;
  const auto* begin = reinterpret_cast<const char*>(bytes.data() + wire::kFramePrefixSize);
  const auto header = nlohmann::json::parse(begin, begin + header_bytes, nullptr, false);
  if (!header.is_object() || !header.contains("type") || !header["type"].is_string()) return false;
  const RequestRow* row = find_row(header["type"].get<std::string>());
  return row && row->long_running;
}

std::string refusal_reply(std::span<const std::byte> bytes, const RequestError& error) {
  nlohmann::json header;
  if (bytes.size() >= wire::kFramePrefixSize) {
    std::uint32_t header_bytes = 0;
    for (int i = 3; i >= 0; --i) header_bytes = (header_bytes << 8) | static_cast<std::uint8_t>(bytes[8 + i]);
    if (header_bytes <= bytes.size() - wire::kFramePrefixSize) {
      const auto* begin = reinterpret_cast<const char*>(bytes.data() + wire::kFramePrefixSize);
      header = nlohmann::json::parse(begin, begin + header_bytes, nullptr, false);
    }
  }
  if (!header.is_object()) return error_reply(error, nullptr, nullptr);
  auto id = field_or_null(header, "id");
  return error_reply(error, field_or_null(header, "type"), id.is_primitive() ? id : nlohmann::json());
}

std::string error_reply(const RequestError& error, const nlohmann::json& request_type,
                        const nlohmann::json& id) {
  nlohmann::json header = {{"ok", false},
                           {"type", "error"},
                           {"protocol_version", kProtocolVersion},
                           {"request", request_type.is_string() ? request_type : nlohmann::json()},
                           {"error", {{"kind", wire_error_name(error.kind)}, {"message", error.message}}}};
  if (!id.is_null()) header["id"] = id;
  return encode_message(std::move(header));
}

std::string handle_message(DaemonState& state, std::span<const std::byte> bytes,
                           std::shared_ptr<const void> keeper) {
  nlohmann::json type;
  nlohmann::json id;
  try {
    auto message = decode_message(bytes, std::move(keeper), wire::SegmentUse::borrow);
    if (!message) return error_reply(message.error(), type, id);
    type = field_or_null(message->header, "type");
    id = field_or_null(message->header, "id");
    if (!id.is_primitive()) id = nullptr;  // echoed only when it is a plain value
    auto row = check_request(state, message->header);
    if (!row) return error_reply(row.error(), type, id);
    const Fields fields(message->header, std::string((*row)->type));
    auto reply = (*row)->handler(state, *message, fields);
    if (!reply) {
      state.log(fmt::format("{} request failed ({}): {}", (*row)->type, wire_error_name(reply.error().kind),
                            reply.error().message));
      return error_reply(reply.error(), type, id);
    }
    reply->header["ok"] = true;
    reply->header["type"] = type;
    reply->header["protocol_version"] = kProtocolVersion;
    if (!id.is_null()) reply->header["id"] = id;
    return encode_message(std::move(reply->header), reply->tensors);
  } catch (const std::exception& e) {
    state.log(fmt::format("internal error in a {} request: {}",
                          type.is_string() ? type.get<std::string>() : "?", e.what()));
    return error_reply(
        RequestError(WireError::internal,
                     fmt::format("internal error: {}; this is a bug in gpuemu, please report it "
                                 "with the request",
                                 e.what())),
        type, id);
  } catch (...) {
    // Not a std::exception (a library's own type): still this request's failure, not the daemon's.
    state.log(fmt::format("internal error in a {} request: an unknown exception",
                          type.is_string() ? type.get<std::string>() : "?"));
    return error_reply(
        RequestError(WireError::internal,
                     "internal error: an unknown exception; this is a bug in gpuemu, please report "
                     "it with the request"),
        type, id);
  }
}

}  // namespace gpuemu::daemon
