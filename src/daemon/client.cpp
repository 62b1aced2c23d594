// The synchronous daemon client (client.hpp) over an NNG REQ socket.
#include "daemon/client.hpp"

#include <fmt/format.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include <cstring>

namespace gpuemu::daemon {

struct Client::Impl {
  nng_socket socket = NNG_SOCKET_INITIALIZER;
  std::string url;
  int timeout_ms = 30000;
  ~Impl() { nng_close(socket); }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Expected<Client> Client::connect(const std::string& url, int timeout_ms) {
  auto impl = std::make_unique<Impl>();
  impl->url = url;
  impl->timeout_ms = timeout_ms;
  if (int rv = nng_req0_open(&impl->socket); rv != 0) {
    return fail(ErrorKind::environment, fmt::format("cannot open an NNG socket: {}", nng_strerror(rv)));
  }
  nng_socket_set_size(impl->socket, NNG_OPT_RECVMAXSZ, std::size_t{4} << 30);
  // A request that outlives the timeout is not resent: the daemon may still be working on it.
  nng_socket_set_ms(impl->socket, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
  if (int rv = nng_dial(impl->socket, url.c_str(), nullptr, 0); rv != 0) {
    return fail(ErrorKind::environment,
                fmt::format("no gpuemu daemon is listening on {} ({}); start one with 'gpuemu daemon start "
                            "--background'",
                            url, nng_strerror(rv)));
  }
  return Client(std::move(impl));
}

Expected<std::string> Client::exchange(const std::string& request, int timeout_ms) {
  const int timeout = timeout_ms > 0 ? timeout_ms : impl_->timeout_ms;
  nng_socket_set_ms(impl_->socket, NNG_OPT_RECVTIMEO, timeout);
  nng_socket_set_ms(impl_->socket, NNG_OPT_SENDTIMEO, timeout);
  nng_msg* msg = nullptr;
  if (int rv = nng_msg_alloc(&msg, request.size()); rv != 0) {
    return fail(ErrorKind::environment, fmt::format("cannot allocate a request: {}", nng_strerror(rv)));
  }
  if (!request.empty()) std::memcpy(nng_msg_body(msg), request.data(), request.size());
  if (int rv = nng_sendmsg(impl_->socket, msg, 0); rv != 0) {
    nng_msg_free(msg);
    return fail(ErrorKind::environment,
                fmt::format("cannot send to the daemon on {}: {}", impl_->url, nng_strerror(rv)));
  }
  nng_msg* reply = nullptr;
  if (int rv = nng_recvmsg(impl_->socket, &reply, 0); rv != 0) {
    return fail(ErrorKind::environment,
                rv == NNG_ETIMEDOUT
                    ? fmt::format("the daemon on {} did not answer within {} ms; see 'gpuemu daemon logs'",
                                  impl_->url, timeout)
                    : fmt::format("no answer from the daemon on {}: {}", impl_->url, nng_strerror(rv)));
  }
  std::string out(static_cast<const char*>(nng_msg_body(reply)), nng_msg_len(reply));
  nng_msg_free(reply);
  return out;
}

Expected<Message> Client::request(nlohmann::json header,
                                  const std::vector<std::pair<std::string, const tensor::Tensor*>>& tensors,
                                  int timeout_ms) {
  header["protocol_version"] = kProtocolVersion;
  const std::string type = header.value("type", "");
  const auto bytes = TRY(exchange(encode_message(std::move(header), tensors), timeout_ms));
  auto reply = decode_message(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (!reply) {
    return fail(ErrorKind::parse,
                fmt::format("the daemon's reply to '{}' cannot be read: {}", type, reply.error().message));
  }
  if (reply->header.value("ok", false)) return std::move(*reply);
  const auto& error = reply->header.contains("error") ? reply->header["error"] : nlohmann::json::object();
  const std::string kind = error.is_object() ? error.value("kind", "internal") : "internal";
  const std::string message = error.is_object() ? error.value("message", "unknown error") : error.dump();
  const ErrorKind local = kind == "bad_request" || kind == "not_found" ? ErrorKind::usage
                          : kind == "config"                           ? ErrorKind::config
                          : kind == "environment"                      ? ErrorKind::environment
                                                                       : ErrorKind::io;
  return fail(local, message);
}

}  // namespace gpuemu::daemon
