// run_process: one child per call, fed and drained from a single poll loop so neither a large
// payload nor a child that never reads stdin can deadlock us; the timeout kills the whole group.
#include "proc/process.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "proc/cancel.hpp"
#include "proc/spawn.hpp"
#include "proc/tail_buffer.hpp"

namespace gpuemu::proc {

namespace {

using Clock = std::chrono::steady_clock;

// After the direct child exits we kill its group and read what is already in the pipes; a
// descendant that escaped the group must not keep us waiting, so this bounds the final drain.
constexpr std::chrono::milliseconds kDrainGrace{200};
// Without an exit watch (platform::open_exit_watch) we notice the child's exit by polling this often.
constexpr int kExitPollMs = 10;
constexpr std::size_t kWriteChunk = 1 << 20;

enum class ReadState { open, eof };

// Reads what is available now (bounded per call so one stream cannot starve the others).
template <class Sink>
ReadState drain(Fd& fd, Sink&& sink) {
  std::array<char, 64 * 1024> buf;
  for (int i = 0; i < 64; ++i) {
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n > 0) {
      if (!sink(std::string_view(buf.data(), static_cast<std::size_t>(n)))) return ReadState::open;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return ReadState::open;
    fd.close();  // EOF or a read error: nothing more will come
    return ReadState::eof;
  }
  return ReadState::open;
}

}  // namespace

Expected<ProcessResult> run_process(const ProcessSpec& spec) {
  SpawnSpec spawn{spec.argv, spec.cwd, spec.extra_env};
  SpawnedChild child = TRY(spawn_child(spawn));
  const auto start = Clock::now();
  const auto deadline = start + spec.timeout;

  ProcessResult result;
  TailBuffer tail(spec.stderr_tail);
  std::size_t written = 0;
  if (spec.stdin_data.empty()) child.stdin_w.close();
  bool exited = false;
  Clock::time_point drain_deadline{};

  auto take_stdout = [&](std::string_view bytes) {
    if (result.stdout_data.size() + bytes.size() > spec.max_stdout) {
      result.stdout_overflow = true;
      return false;
    }
    result.stdout_data.append(bytes);
    return true;
  };
  auto take_stderr = [&](std::string_view bytes) {
    tail.append(bytes);
    return true;
  };

  while (true) {
    if (!exited && has_exited(child)) {
      exited = true;
      kill_group(child.pid);
      child.stdin_w.close();
      drain_deadline = Clock::now() + kDrainGrace;
    }
    if (exited && !child.stdout_r.valid() && !child.stderr_r.valid()) break;
    const auto now = Clock::now();
    if (exited && now >= drain_deadline) break;
    if (!exited && (now >= deadline || cancel_requested())) {
      result.timed_out = true;  // cancelled: the caller reports nothing of this run
      break;
    }

    std::array<pollfd, 4> fds{};
    nfds_t n = 0;
    int in_i = -1, out_i = -1, err_i = -1, pid_i = -1;
    if (child.stdin_w.valid()) {
      in_i = static_cast<int>(n);
      fds[n++] = {child.stdin_w.get(), POLLOUT, 0};
    }
    if (child.stdout_r.valid()) {
      out_i = static_cast<int>(n);
      fds[n++] = {child.stdout_r.get(), POLLIN, 0};
    }
    if (child.stderr_r.valid()) {
      err_i = static_cast<int>(n);
      fds[n++] = {child.stderr_r.get(), POLLIN, 0};
    }
    if (!exited && child.exit_watch.valid()) {
      pid_i = static_cast<int>(n);
      fds[n++] = {child.exit_watch.get(), POLLIN, 0};
    }
    int wait_ms = exited ? poll_timeout_ms(drain_deadline, 1000)
                         : poll_timeout_ms(deadline, child.exit_watch.valid() ? 1000 : kExitPollMs);
    if (cancel_possible()) wait_ms = std::min(wait_ms, kCancelPollMs);
    int ready = ::poll(fds.data(), n, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;

    if (in_i >= 0 && fds[in_i].revents != 0) {
      while (written < spec.stdin_data.size()) {
        std::size_t len = std::min(kWriteChunk, spec.stdin_data.size() - written);
        ssize_t w = ::write(child.stdin_w.get(), spec.stdin_data.data() + written, len);
        if (w > 0) {
          written += static_cast<std::size_t>(w);
          continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) break;
        child.stdin_w.close();  // EPIPE: the child closed stdin or exited; it gets no more input
        break;
      }
      if (written == spec.stdin_data.size()) child.stdin_w.close();
    }
    if (out_i >= 0 && fds[out_i].revents != 0) {
      drain(child.stdout_r, take_stdout);
      if (result.stdout_overflow) break;
    }
    if (err_i >= 0 && fds[err_i].revents != 0) drain(child.stderr_r, take_stderr);
    (void)pid_i;  // its readiness is picked up by has_exited() at the top of the loop
  }

  // Kill the group in every case: on timeout or overflow to stop the child, after a normal exit
  // to stop descendants it left behind. Then reap and pick up whatever stderr is already buffered.
  kill_group(child.pid);
  ExitStatus status = reap(child.pid);
  if (child.stderr_r.valid()) drain(child.stderr_r, take_stderr);
  if (child.stdout_r.valid() && !result.stdout_overflow && !result.timed_out)
    drain(child.stdout_r, take_stdout);

  result.exit_code = status.exited ? status.code : -1;
  result.signaled = status.signaled && !result.timed_out && !result.stdout_overflow;
  result.signal = status.signaled ? status.signal : 0;
  result.stderr_tail = tail.str();
  result.stderr_bytes = tail.total();
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return result;
}

}  // namespace gpuemu::proc
