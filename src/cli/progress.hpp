// Progress on stderr for long runs: a live line on a terminal; in logs (stderr not a terminal)
// plain lines, at most one every few seconds plus one per finished op, never \r or ANSI codes.
// Never writes to stdout, which carries only the requested document.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "engine/executor.hpp"

namespace gpuemu::cli {

// One status line that changes often (minimize's "N runs, smallest so far ..."): redrawn in place
// on a terminal; in a log a plain line when `interval` has passed since the last one, and the
// final state once at the end.
class StatusLine {
 public:
  explicit StatusLine(bool tty, std::chrono::milliseconds interval = std::chrono::seconds(10));
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;
  ~StatusLine();  // ends the line (terminal) or prints the last unprinted state (log)
  void show(const std::string& text);

  // Whether stderr is a terminal, for callers that build a StatusLine for it.
  static bool stderr_is_tty();

 private:
  bool tty_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_printed_{};
  bool printed_any_ = false;
  std::string pending_;  // log mode: the newest state not printed yet
};

class ProgressReporter {
 public:
  ProgressReporter(std::string verb, bool enabled);
  // For tests: whether to draw for a terminal, and how often to print in a log.
  ProgressReporter(std::string verb, bool enabled, bool tty, std::chrono::milliseconds log_interval);
  ~ProgressReporter();
  engine::ProgressFn callback();

 private:
  void update(const std::string& op, std::size_t done, std::size_t total, std::size_t not_passed);
  std::string verb_;
  bool enabled_;
  bool tty_;
  std::chrono::milliseconds log_interval_;
  std::chrono::steady_clock::time_point last_log_;
  bool line_open_ = false;
};

}  // namespace gpuemu::cli
