// WorkerChannel (worker_channel.hpp): frame I/O with a live worker without ever blocking on one
// pipe while the worker waits on another.
#include "proc/worker_channel.hpp"

#include "proc/cancel.hpp"
#include "proc/fork_server.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpuemu::proc {

namespace {

// After the worker exits, how long we keep reading what it already wrote.
constexpr std::chrono::milliseconds kWorkerDrainGrace{200};
constexpr std::size_t kIoChunk = 1 << 20;

// The worker's answer to SIGUSR1 (gpuemu/worker.py STOPPED_AT): the last whole line that starts so.
constexpr std::string_view kStoppedAt = "gpuemu: stopped at ";

std::string stopped_at_line(const std::string& text) {
  const std::size_t at = text.rfind(kStoppedAt);
  if (at == std::string::npos) return {};
  const std::size_t from = at + kStoppedAt.size();
  const std::size_t end = text.find('\n', from);
  return end == std::string::npos ? std::string() : text.substr(from, end - from);
}

}  // namespace

Expected<std::unique_ptr<WorkerChannel>> WorkerChannel::start(const SpawnSpec& spec, std::size_t stderr_tail,
                                                              std::string what) {
  // A fork of the interpreter's fork server when it can (milliseconds instead of a whole Python
  // start); else, and for anything the server cannot start, a process of our own.
  std::optional<SpawnedChild> forked = spawn_from_fork_server(spec, kForkServerStart);
  SpawnedChild child = forked ? std::move(*forked) : TRY(spawn_child(spec));
  return std::unique_ptr<WorkerChannel>(new WorkerChannel(std::move(child), stderr_tail, std::move(what)));
}

WorkerChannel::WorkerChannel(SpawnedChild child, std::size_t stderr_tail, std::string what)
    : child_(std::move(child)), stderr_(stderr_tail), what_(std::move(what)) {}

WorkerChannel::~WorkerChannel() {
  stop();
}

ExitStatus WorkerChannel::stop() {
  if (stopped_) return exit_;
  stopped_ = true;
  child_.stdin_w.close();
  kill_group(child_.pid);
  exit_ = reap(child_);
  drain_stderr();
  child_.stdout_r.close();
  child_.stderr_r.close();
  child_.exit_watch.close();
  return exit_;
}

std::string WorkerChannel::where_stopped(std::chrono::milliseconds grace) {
  if (stopped_ || child_.pid <= 0 || !child_.stderr_r.valid() || ::kill(child_.pid, SIGUSR1) != 0) return {};
  const auto until = Clock::now() + grace;
  while (true) {
    if (std::string where = stopped_at_line(stderr_.str()); !where.empty()) return where;
    if (!child_.stderr_r.valid() || Clock::now() >= until) return {};
    pollfd p{child_.stderr_r.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, poll_timeout_ms(until, static_cast<int>(grace.count())));
    if (ready < 0 && errno != EINTR) return {};
    if (ready > 0) drain_stderr();
  }
}

void WorkerChannel::drain_stderr() {
  if (!child_.stderr_r.valid()) return;
  std::array<char, 64 * 1024> buf;
  for (int i = 0; i < 64; ++i) {
    ssize_t n = ::read(child_.stderr_r.get(), buf.data(), buf.size());
    if (n > 0) {
      stderr_.append(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) child_.stderr_r.close();
    return;
  }
}

WorkerChannel::Status WorkerChannel::exchange(const wire::OutgoingFrame* request, wire::IncomingFrame& reply,
                                              Clock::time_point deadline, std::size_t max_reply_bytes) {
  error_.clear();
  reply = wire::IncomingFrame{};
  if (stopped_) return Status::exited;

  // Output cursor over head + payload segments.
  std::size_t segment = 0, offset = 0;
  const std::size_t segments = request ? request->payload.size() + 1 : 0;
  auto current = [&](std::size_t i) -> std::span<const std::byte> {
    if (i == 0) return std::as_bytes(std::span(request->head));
    return request->payload[i - 1];
  };
  auto skip_empty = [&] {
    while (segment < segments && offset >= current(segment).size()) {
      ++segment;
      offset = 0;
    }
  };
  skip_empty();

  // Input: prefix, then header, then payload.
  std::array<std::byte, wire::kFramePrefixSize> prefix_bytes{};
  std::size_t have_prefix = 0;
  wire::FramePrefix prefix;
  bool have_sizes = false;
  std::string header;
  std::size_t have_header = 0, have_payload = 0;

  bool exited = false;
  Clock::time_point drain_deadline{};
  while (true) {
    if (!exited && has_exited(child_)) {
      exited = true;
      drain_deadline = Clock::now() + kWorkerDrainGrace;
    }
    const auto now = Clock::now();
    if (exited && now >= drain_deadline) return Status::exited;
    if (!exited && now >= deadline) return Status::timed_out;
    if (!exited && cancel_requested()) {
      error_ = "cancelled";  // the caller stops the worker as after a timeout and reports nothing
      return Status::timed_out;
    }

    std::array<pollfd, 4> fds{};
    nfds_t n = 0;
    const bool writing = segment < segments && child_.stdin_w.valid();
    if (writing) fds[n++] = {child_.stdin_w.get(), POLLOUT, 0};
    const int out_i = static_cast<int>(n);
    if (!child_.stdout_r.valid()) return Status::exited;
    fds[n++] = {child_.stdout_r.get(), POLLIN, 0};
    int err_i = -1;
    if (child_.stderr_r.valid()) {
      err_i = static_cast<int>(n);
      fds[n++] = {child_.stderr_r.get(), POLLIN, 0};
    }
    if (!exited && child_.exit_watch.valid()) fds[n++] = {child_.exit_watch.get(), POLLIN, 0};
    int wait_ms = exited ? poll_timeout_ms(drain_deadline, 1000)
                         : poll_timeout_ms(deadline, child_.exit_watch.valid() ? 1000 : 10);
    if (cancel_possible()) wait_ms = std::min(wait_ms, kCancelPollMs);
    int ready = ::poll(fds.data(), n, wait_ms);
    if (ready < 0 && errno != EINTR) {
      error_ = std::string("poll failed: ") + std::strerror(errno);
      return Status::exited;
    }
    if (ready <= 0) continue;

    if (writing && fds[0].revents != 0) {
      while (segment < segments) {
        auto seg = current(segment);
        std::size_t len = std::min(kIoChunk, seg.size() - offset);
        ssize_t w = ::write(child_.stdin_w.get(), seg.data() + offset, len);
        if (w > 0) {
          offset += static_cast<std::size_t>(w);
          skip_empty();
          continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) break;
        child_.stdin_w.close();  // EPIPE: the worker is gone; its exit shows up on stdout
        break;
      }
    }
    if (err_i >= 0 && fds[err_i].revents != 0) drain_stderr();
    if (fds[out_i].revents == 0) continue;

    // Read as much of the reply as is available, straight into its destination.
    for (int round = 0; round < 64; ++round) {
      std::byte* dest = nullptr;
      std::size_t want = 0;
      if (have_prefix < wire::kFramePrefixSize) {
        dest = prefix_bytes.data() + have_prefix;
        want = wire::kFramePrefixSize - have_prefix;
      } else if (have_header < prefix.header_bytes) {
        dest = reinterpret_cast<std::byte*>(header.data()) + have_header;
        want = prefix.header_bytes - have_header;
      } else {
        dest = reply.payload->data() + have_payload;
        want = static_cast<std::size_t>(prefix.payload_bytes) - have_payload;
      }
      // want > 0 here: a frame whose parts are all complete has already been returned.
      ssize_t r = ::read(child_.stdout_r.get(), dest, std::min(want, kIoChunk));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EAGAIN) break;
      if (r <= 0) {
        child_.stdout_r.close();
        return Status::exited;
      }
      if (have_prefix < wire::kFramePrefixSize) {
        have_prefix += static_cast<std::size_t>(r);
      } else if (have_header < prefix.header_bytes) {
        have_header += static_cast<std::size_t>(r);
      } else {
        have_payload += static_cast<std::size_t>(r);
      }
      if (have_prefix == wire::kFramePrefixSize && !have_sizes) {
        auto decoded = wire::decode_frame_prefix(prefix_bytes, what_);
        if (!decoded) {
          error_ = decoded.error().message;
          return Status::bad_frame;
        }
        prefix = *decoded;
        have_sizes = true;
        // Compared one by one: a payload length near 2^64 wraps the sum around to a small number.
        if (prefix.payload_bytes > max_reply_bytes ||
            prefix.header_bytes > max_reply_bytes - prefix.payload_bytes)
          return Status::overflow;
        header.resize(prefix.header_bytes);
        reply.payload->resize(static_cast<std::size_t>(prefix.payload_bytes));
      }
      if (have_sizes && have_header == prefix.header_bytes && have_payload == prefix.payload_bytes) {
        reply.header = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
        if (reply.header.is_discarded() || !reply.header.is_object()) {
          error_ = what_ + " sent a frame whose header is not a JSON object";
          return Status::bad_frame;
        }
        drain_stderr();
        return Status::ok;
      }
    }
  }
}

}  // namespace gpuemu::proc
