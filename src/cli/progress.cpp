// Progress reporter (see progress.hpp). On a terminal the line is redrawn in place; in CI logs
// only completed ops are printed so a 1000-case run does not flood the log.
#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>

namespace gpuemu::cli {

ProgressReporter::ProgressReporter(std::string verb, bool enabled)
    : verb_(std::move(verb)), enabled_(enabled), tty_(isatty(STDERR_FILENO) == 1) {}

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
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    line_open_ = done < total;
    if (done == total) std::fputs("\n", stderr);
  } else if (done == total) {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace gpuemu::cli
