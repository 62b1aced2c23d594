// Builds the case plans of `gpuemu test` (a small fixed set per op and dtype) and
// `gpuemu fuzz` (N seeded cases per op, optionally forced to one dtype or distribution).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/executor.hpp"
#include "fuzz/case.hpp"

namespace gpuemu::engine {

struct Selection {
  std::vector<std::string> ops;  // empty = every op this run can execute
  std::optional<tensor::DType> dtype;
  std::optional<rng::ValueDistribution> values;  // nullopt or mixed = free
  std::optional<tensor::Layout> layout;
};

// The ops a CLI run executes. Unknown names are usage errors with a suggestion; ops the CLI
// cannot run (a client runs them: no op under test here) are skipped unless named, then an error.
Expected<std::vector<const config::OpConfig*>> select_ops(const config::Config& config,
                                                          const std::vector<std::string>& names);

// One line per op that select_ops leaves out of an unnamed selection, saying why (a client runs
// it) and how to run it; the commands print these so no op is left out without a word.
std::vector<std::string> ops_not_run_here(const config::Config& config);

// --seed, else [validation] seed, else a fresh random seed (0 means random in the config).
std::uint64_t resolve_master_seed(std::optional<std::uint64_t> cli_seed, const config::Config& config);

// Both plans start each op's cases (each dtype's, for test) with the op's corner cases
// (fuzz/corners.hpp), then random ones; a count below the corner count drops the last corners and
// names them in OpPlan::corners_dropped. CornerCases::skip leaves them out (ci's fuzz part, whose
// test part already ran them at every dtype).
enum class CornerCases { first, skip };

Expected<RunPlan> plan_test(const config::Config& config, const Selection& selection,
                            std::uint64_t master_seed, int cases_per_dtype);
// [ci] thorough_timeout bounds a `gpuemu test` run (CLI and daemon), as it bounds `ci run`
// (configuration.txt: "a thorough test run"; docs/configuration.md "[ci]"): sets the plan's
// deadline that many seconds from now.
void bound_by_thorough_timeout(RunPlan& plan, const config::Config& config);
// A run that stopped at that deadline checked less than planned: the message that says so, how many
// cases ran, and what to change; nullopt for a run that was not stopped by it. Such a run fails.
std::optional<std::string> thorough_timeout_stop(const config::Config& config, const RunPlan& plan,
                                                 const result::RunResult& result);

Expected<RunPlan> plan_fuzz(const config::Config& config, const Selection& selection,
                            std::uint64_t master_seed, int iterations,
                            CornerCases corner_cases = CornerCases::first);

}  // namespace gpuemu::engine
