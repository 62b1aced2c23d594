// Shrinks a failing case to a small one that fails the same way: dims first (bisection toward the
// smallest failing size, then tile edges; linked schema dims stay consistent and inside their
// ranges), then values. Every step re-runs the real op and reference.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/op_session.hpp"
#include "fuzz/case.hpp"

namespace gpuemu::engine {

enum class MinimizeStrategy { dims, values, all };
std::optional<MinimizeStrategy> parse_minimize_strategy(std::string_view name);

// The two phases of a minimization, in the order they run.
enum class MinimizePhase { dims, values };
std::string_view minimize_phase_name(MinimizePhase phase);

struct MinimizeOptions {
  MinimizeStrategy strategy = MinimizeStrategy::all;
  int max_iters = 200;  // runs of op + reference, in total (the original's own run included)
  std::function<void(int attempts, const fuzz::Case& best)> on_progress;
};

struct MinimizeResult {
  result::CaseRecord original;
  result::CaseRecord minimized;  // equals original when nothing smaller failed the same way
  fuzz::Case minimized_case;
  int steps = 0;     // accepted reductions
  int attempts = 0;  // runs of op + reference
  // Set when max_iters ran out before the search finished: `minimized` is then the smallest case
  // found so far, and the phase says where the search stopped.
  std::optional<MinimizePhase> out_of_budget_in;
};

// The search's own fields of a minimization's JSON, the same in the CLI's output and the daemon's
// reply: steps, attempts, max_iters, out_of_budget and stopped_in (the phase, or null).
nlohmann::json search_json(const MinimizeResult& result, const MinimizeOptions& options);

// `original` must fail; the result keeps its failure kind. Errors only for fatal conditions.
Expected<MinimizeResult> minimize(OpSession& session, const fuzz::Case& original,
                                  const MinimizeOptions& options);

// The block of a contiguous tensor that starts at `offsets` and has `sizes` (offsets[i] + sizes[i]
// <= shape[i]); exposed for tests.
tensor::Tensor sub_block(const tensor::Tensor& contiguous, const tensor::Shape& offsets,
                         const tensor::Shape& sizes);

}  // namespace gpuemu::engine
