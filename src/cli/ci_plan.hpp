// The case plan of `gpuemu ci run`: the `test` cases plus a fuzz budget for every op, limited to
// [ci] quick_dtypes with --quick, and the deterministic split of that plan into shards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engine/executor.hpp"
#include "util/error.hpp"

namespace gpuemu::cli {

struct Shard {
  std::uint64_t index = 0;  // 0-based
  std::uint64_t count = 1;
  std::string label() const;  // "I/N", 1-based
};

// Parses --shard "I/N" (1 <= I <= N).
Expected<Shard> parse_shard(const std::string& text);

struct CiPlanOptions {
  bool quick = false;
  int iterations = 0;                  // fuzz cases per op; 0 = [ci] quick_iterations or fuzz_iterations
  int test_cases = 0;                  // test cases per op and dtype; 0 = [validation] test_cases
  std::string command = "ci";          // `gpuemu test --quick` runs this plan as "test"
  std::vector<std::string> ops;        // empty = every op the CLI can run (engine::select_ops)
  std::optional<tensor::DType> dtype;  // only this one of the dtypes the plan would run
};

// For each op, in config order: its test cases (per dtype), then its fuzz cases. With `quick` only
// the dtypes of [ci] quick_dtypes the op declares, and ops declaring none of them are left out.
Expected<engine::RunPlan> plan_ci(const config::Config& config, std::uint64_t master_seed,
                                  const CiPlanOptions& options);

// Keeps the cases whose position in the unsharded plan falls to `shard` (position modulo count), so
// the shards of one master seed partition the unsharded run and `report merge` rebuilds it.
void keep_shard(engine::RunPlan& plan, const Shard& shard);

}  // namespace gpuemu::cli
