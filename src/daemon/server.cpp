// The NNG server loop (server.hpp). Workers poll for requests with a short timeout so they notice
// a shutdown; every request gets a cancel token that its client's disconnection or a stop sets.
#include "daemon/server.hpp"

#include <fmt/format.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "daemon/request_table.hpp"
#include "proc/cancel.hpp"

namespace gpuemu::daemon {
namespace {

constexpr nng_duration kPollMs = 100;
constexpr nng_duration kSendTimeoutMs = 10000;
// Large tensors travel in one message; bound it so a bogus client cannot make us allocate without limit.
constexpr std::size_t kMaxMessageBytes = std::size_t{4} << 30;
// How long a stop lets requests in flight finish before it cancels them (docs/protocol.md "Limits").
constexpr auto kStopGrace = std::chrono::seconds(2);

}  // namespace

struct Server::Impl {
  DaemonState& state;
  ServerOptions options;
  nng_socket socket = NNG_SOCKET_INITIALIZER;
  nng_listener listener = NNG_LISTENER_INITIALIZER;
  std::vector<std::thread> threads;
  bool open = false;
  // Threads of long-running requests, at most options.max_long_requests at a time.
  struct LongRequest {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex long_mutex;
  std::vector<LongRequest> long_requests;
  // Cancel tokens of the requests being served, by the id of the NNG pipe (client connection)
  // each came on: a pipe that goes away cancels its requests.
  std::mutex tokens_mutex;
  std::multimap<std::uint32_t, std::weak_ptr<std::atomic<bool>>> tokens;

  explicit Impl(DaemonState& s, ServerOptions o) : state(s), options(std::move(o)) {}
  ~Impl() {
    if (open) nng_close(socket);
  }

  proc::CancelToken track(nng_msg* request) {
    auto token = std::make_shared<std::atomic<bool>>(false);
    const std::uint32_t pipe = nng_pipe_id(nng_msg_get_pipe(request));
    std::lock_guard lock(tokens_mutex);
    std::erase_if(tokens, [](const auto& entry) { return entry.second.expired(); });
    tokens.emplace(pipe, token);
    return token;
  }

  void cancel(std::uint32_t pipe) {
    std::lock_guard lock(tokens_mutex);
    const auto [first, last] = tokens.equal_range(pipe);
    for (auto it = first; it != last; ++it) {
      if (auto token = it->second.lock()) *token = true;
    }
  }

  void cancel_all() {
    std::lock_guard lock(tokens_mutex);
    for (const auto& [pipe, weak] : tokens) {
      if (auto token = weak.lock()) *token = true;
    }
  }

  // NNG calls this on its own thread when a client connection closes (the client exited, was
  // killed, or closed its socket): whatever it asked for is of no use to anyone any more.
  static void on_pipe_removed(nng_pipe pipe, nng_pipe_ev, void* self) {
    static_cast<Impl*>(self)->cancel(nng_pipe_id(pipe));
  }

  void send_reply(nng_ctx ctx, nng_aio* aio, std::string reply) {
    nng_msg* out = nullptr;
    if (nng_msg_alloc(&out, reply.size()) != 0) {
      state.log(fmt::format("out of memory for a reply of {} bytes", reply.size()));
      return;
    }
    if (!reply.empty()) std::memcpy(nng_msg_body(out), reply.data(), reply.size());
    reply.clear();
    reply.shrink_to_fit();
    nng_aio_set_timeout(aio, kSendTimeoutMs);
    nng_aio_set_msg(aio, out);
    nng_ctx_send(ctx, aio);
    nng_aio_wait(aio);
    if (const int rv = nng_aio_result(aio); rv != 0) {
      nng_msg_free(out);  // the client went away; nothing else to do
      state.log(fmt::format("a reply could not be sent: {}", nng_strerror(rv)));
    }
  }

  void serve_one(nng_ctx ctx, nng_aio* aio, nng_msg* request) {
    ++state.in_flight;
    const auto* body = static_cast<const std::byte*>(nng_msg_body(request));
    const std::span<const std::byte> bytes(body, nng_msg_len(request));
    const proc::CancelToken token = track(request);
    std::string reply;
    {
      const proc::CancelScope scope(token);
      // The request's tensors are views into the message, which lives as long as they do.
      reply = handle_message(state, bytes, std::shared_ptr<nng_msg>(request, nng_msg_free));
    }
    if (*token) state.log("a request was cancelled: its client disconnected or the daemon is stopping");
    send_reply(ctx, aio, std::move(reply));
    ++state.served;
    --state.in_flight;
  }

  bool open_context(nng_ctx& ctx, nng_aio*& aio) {
    if (nng_ctx_open(&ctx, socket) != 0) return false;
    if (nng_aio_alloc(&aio, nullptr, nullptr) != 0) {
      nng_ctx_close(ctx);
      return false;
    }
    return true;
  }

  // Hands the request and its context to a thread of its own (true), or, when
  // options.max_long_requests already run, answers `busy` on the worker's context (false).
  bool serve_long(nng_ctx ctx, nng_aio* aio, nng_msg* request) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::unique_lock lock(long_mutex);
    std::erase_if(long_requests, [](LongRequest& r) {
      if (!*r.done) return false;
      r.thread.join();
      return true;
    });
    if (long_requests.size() >= static_cast<std::size_t>(std::max(1, options.max_long_requests))) {
      lock.unlock();
      const auto* body = static_cast<const std::byte*>(nng_msg_body(request));
      std::string reply = refusal_reply(
          std::span<const std::byte>(body, nng_msg_len(request)),
          RequestError(WireError::busy,
                       fmt::format("the daemon already runs {} long requests (fuzz, test, reproduce, "
                                   "minimize, calibrate), its limit (max_long_requests, set by "
                                   "GPUEMU_DAEMON_MAX_LONG_REQUESTS); retry when one has finished",
                                   long_requests_limit())));
      nng_msg_free(request);
      send_reply(ctx, aio, std::move(reply));
      ++state.served;
      return false;
    }
    long_requests.push_back({std::thread([this, ctx, aio, request, done] {
                               serve_one(ctx, aio, request);
                               nng_aio_free(aio);
                               nng_ctx_close(ctx);
                               *done = true;
                             }),
                             done});
    return true;
  }

  int long_requests_limit() const { return std::max(1, options.max_long_requests); }

  void worker() {
    nng_ctx ctx;
    nng_aio* aio = nullptr;
    if (!open_context(ctx, aio)) {
      state.log("a worker could not open its NNG context; serving with fewer workers");
      return;
    }
    while (!state.stopping) {
      nng_aio_set_timeout(aio, kPollMs);
      nng_ctx_recv(ctx, aio);
      nng_aio_wait(aio);
      const int rv = nng_aio_result(aio);
      if (rv == NNG_ETIMEDOUT) continue;
      if (rv == NNG_ECLOSED) break;
      if (rv != 0) {
        state.log(fmt::format("receive failed: {}", nng_strerror(rv)));
        continue;
      }
      nng_msg* request = nng_aio_get_msg(aio);
      const auto* body = static_cast<const std::byte*>(nng_msg_body(request));
      if (is_long_running(std::span<const std::byte>(body, nng_msg_len(request)))) {
        if (!serve_long(ctx, aio, request)) continue;  // answered busy: the context is ours still
        if (!open_context(ctx, aio)) {
          state.log("a worker could not open a new NNG context; serving with fewer workers");
          return;
        }
        continue;
      }
      serve_one(ctx, aio, request);
    }
    nng_aio_free(aio);
    nng_ctx_close(ctx);
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_) {
    impl_->state.stopping = true;
    join();
  }
}

Expected<std::unique_ptr<Server>> Server::listen(DaemonState& state, const ServerOptions& options) {
  auto impl = std::make_unique<Impl>(state, options);
  auto failed = [&](const char* what, int rv) {
    return fail(ErrorKind::io,
                fmt::format("cannot listen on {}: {} failed: {}; check that the directory exists and "
                            "is writable, and that no other program uses the socket",
                            options.url, what, nng_strerror(rv)));
  };
  if (int rv = nng_rep0_open(&impl->socket); rv != 0) return failed("nng_rep0_open", rv);
  impl->open = true;
  nng_socket_set_size(impl->socket, NNG_OPT_RECVMAXSZ, kMaxMessageBytes);
  if (int rv = nng_pipe_notify(impl->socket, NNG_PIPE_EV_REM_POST, &Impl::on_pipe_removed, impl.get());
      rv != 0) {
    return failed("nng_pipe_notify", rv);
  }
  if (int rv = nng_listener_create(&impl->listener, impl->socket, options.url.c_str()); rv != 0) {
    return failed("nng_listener_create", rv);
  }
  nng_listener_set_int(impl->listener, NNG_OPT_IPC_PERMISSIONS, options.ipc_permissions);
  nng_listener_set_size(impl->listener, NNG_OPT_RECVMAXSZ, kMaxMessageBytes);
  if (int rv = nng_listener_start(impl->listener, 0); rv != 0) return failed("nng_listener_start", rv);
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::start() {
  for (int i = 0; i < std::max(1, impl_->options.workers); ++i)
    impl_->threads.emplace_back([this] { impl_->worker(); });
}

void Server::join() {
  // Requests in flight get kStopGrace to finish, then they are cancelled: their waits on scripts
  // and workers end within proc::kCancelPollMs, so a stop takes bounded time whatever they do.
  const auto until = std::chrono::steady_clock::now() + kStopGrace;
  while (impl_->state.in_flight > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  impl_->cancel_all();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  impl_->threads.clear();
  {
    std::lock_guard lock(impl_->long_mutex);
    for (auto& r : impl_->long_requests) r.thread.join();
    impl_->long_requests.clear();
  }
  if (impl_->open) {
    nng_close(impl_->socket);
    impl_->open = false;
  }
}

}  // namespace gpuemu::daemon
