// Progress reporter and status line (see progress.hpp). On a terminal the line is redrawn in place;
// in CI logs a 1000-case run prints a line per finished op and one every few seconds, so the log
// stays readable and carries no carriage returns or escape codes.
#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>

namespace gpuemu::cli {
namespace {

constexpr auto kLogInterval = std::chrono::seconds(10);

}  // namespace

bool StatusLine::stderr_is_tty() {
  return isatty(STDERR_FILENO) == 1;
}

StatusLine::StatusLine(bool tty, std::chrono::milliseconds interval) : tty_(tty), interval_(interval) {}

StatusLine::~StatusLine() {
  if (tty_) {
    if (printed_any_) std::fputs("\n", stderr);
  } else if (!pending_.empty()) {
    std::fprintf(stderr, "%s\n", pending_.c_str());
  }
  std::fflush(stderr);
}

void StatusLine::show(const std::string& text) {
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    printed_any_ = true;
  } else if (!printed_any_ || now - last_printed_ >= interval_) {
    std::fprintf(stderr, "%s\n", text.c_str());
    printed_any_ = true;
    last_printed_ = now;
    pending_.clear();
  } else {
    pending_ = text;
  }
  std::fflush(stderr);
}

ProgressReporter::ProgressReporter(std::string verb, bool enabled)
    : ProgressReporter(std::move(verb), enabled, StatusLine::stderr_is_tty(), kLogInterval) {}

ProgressReporter::ProgressReporter(std::string verb, bool enabled, bool tty,
                                   std::chrono::milliseconds log_interval)
    : verb_(std::move(verb)),
      enabled_(enabled),
      tty_(tty),
      log_interval_(log_interval),
      last_log_(std::chrono::steady_clock::now()) {}

ProgressReporter::~ProgressReporter() {
  if (line_open_) std::fputs("\n", stderr);
}

engine::ProgressFn ProgressReporter::callback() {
  if (!enabled_) return {};
  return [this](const std::string& op, std::size_t done, std::size_t total, std::size_t not_passed) {
    update(op, done, total, not_passed);
  };
}

void ProgressReporter::update(const std::string& op, std::size_t done, std::size_t total, std::size_t not_passed) {
  const std::string line =
      fmt::format("{} {}: {}/{} cases, {} not passed", verb_, op, done, total, not_passed);
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    line_open_ = done < total;
    if (done == total) std::fputs("\n", stderr);
  } else if (done == total || now - last_log_ >= log_interval_) {
    // A log: the finished op, and between those a line now and then so a long run shows life.
    std::fprintf(stderr, "%s\n", line.c_str());
    last_log_ = now;
  }
  std::fflush(stderr);
}

}  // namespace gpuemu::cli
