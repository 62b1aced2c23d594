// Progress on stderr for long runs: a live line on a terminal, one line per finished op in logs.
// Never writes to stdout, which carries only the requested document.
#pragma once

#include <cstddef>
#include <string>

#include "engine/executor.hpp"

namespace gpuemu::cli {

class ProgressReporter {
 public:
  ProgressReporter(std::string verb, bool enabled);
  ~ProgressReporter();
  engine::ProgressFn callback();

 private:
  void update(const std::string& op, std::size_t done, std::size_t total, std::size_t not_passed);
  std::string verb_;
  bool enabled_;
  bool tty_;
  bool line_open_ = false;
};

}  // namespace gpuemu::cli
