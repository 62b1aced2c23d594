// Before a run's first case: every `module:function` and warm script of the selected ops must
// load (docs/configuration.md, "Load-time checks"), and an op without a written `source` gets one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proc/load_check.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

// Loads the ops' callables and persistent scripts once, in one Python process per environment.
// A runnable that does not load (ImportError, no such function, not callable) is a config error
// at the file:line:col of the key that named it, with Python's message; all such runnables are
// reported together. On success: op name -> source inferred for ops whose `source` is empty
// ("path:line" of the callable or served function, or the cold script's path; relative to the
// project root when inside it).
Expected<std::map<std::string, std::string>> check_op_loads(const config::Config& config,
                                                            const std::vector<const config::OpConfig*>& ops);

// The same check run ahead, before the ops are selected (expand_autotune_variants): op name -> the
// autotuned kernels its op under test reaches (empty when none or when it does not load). Failures are
// not reported here; the answers are kept for this run's check_op_loads, which reports them.
Expected<std::map<std::string, std::vector<proc::AutotunedKernel>>> preload_op_checks(
    const config::Config& config, const std::vector<const config::OpConfig*>& ops);

}  // namespace gpuemu::engine
