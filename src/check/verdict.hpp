// What a comparison of one case concludes: the failure kind, error statistics and a message.
// FailureKind numbers are stored in SQLite (result.json holds the kinds' names): never renumber.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuemu::check {

enum class FailureKind : int {
  none = 0,                  // passed
  mismatch = 1,              // some element outside atol + rtol * |ref|
  nonfinite_mismatch = 2,    // NaN/Inf positions or signs differ from the reference
  unexpected_nonfinite = 3,  // check_nan / check_inf: output has NaN/Inf the reference lacks
  shape_mismatch = 4,
  dtype_mismatch = 5,
  invariant_violation = 6,
  op_error = 7,                  // the op under test crashed, timed out or answered garbage
  reference_error = 8,           // the reference did
  missing_output = 9,            // an output the reference has is absent from the op's answer
  input_mutated = 10,            // client-side: the op wrote into its inputs
  output_aliased = 11,           // client-side: an output aliases an input buffer
  out_of_bounds = 12,            // a kernel load or store reached past the storage of its tensors (sanitizer)
  interpreter_unsupported = 13,  // the kernel needs what the CPU interpreter cannot run: a limit, not a bug
  kernel_not_launched = 14,      // under the Triton interpreter the op's call launched no @triton.jit kernel
  // New case kinds go here, numbered on: then move kLastFailureKind and add a row to failure_kinds.cpp.

  // Report-only kinds: what a report flags besides a failing case. Never a case's verdict, never
  // stored, never in ops[].failures; they are rows of the table in failure_kinds.cpp all the same.
  regression = 101,      // a baseline regression (ci.baseline.regressions)
  lint_violation = 102,  // a kernel artifact check failed (ci.lint)
  not_run = 103,         // an op no case of which ran before the time budget
};
// The highest case kind: a stored kind above it comes from a newer gpuemu (store/queries.cpp).
inline constexpr FailureKind kLastFailureKind = FailureKind::kernel_not_launched;
inline constexpr int kReportOnlyKinds = 3;
// The result.json name of a kind ("none" for a pass); every kind has one (failure_kinds.cpp).
std::string_view failure_kind_name(FailureKind kind);
// `none` or a case kind by its result.json name; nullopt for anything else, report-only names included.
std::optional<FailureKind> parse_failure_kind(std::string_view name);
// True for the kinds that say a script could not produce an answer, not that an answer was wrong.
inline bool is_script_error(FailureKind kind) {
  return kind == FailureKind::op_error || kind == FailureKind::reference_error;
}

// One element compared: where it is and what both sides had.
struct ElementDiff {
  std::string output;               // output name ("out" for a single tensor)
  std::vector<std::int64_t> index;  // logical coordinates
  double actual = 0;
  double expected = 0;
  double abs_err = 0;
  double rel_err = 0;
};

struct ErrorStats {
  double max_abs = 0;
  double max_rel = 0;
  double max_ulp = 0;           // in the op output's dtype
  std::int64_t mismatches = 0;  // elements outside tolerance (non-finite mismatches included)
  std::int64_t elements = 0;
  double mismatch_fraction = 0;
  double tolerance_used = 0;       // max over elements of |out-ref| / (atol + rtol*|ref|); > 1 fails
  std::vector<ElementDiff> worst;  // up to 5, worst first
};

struct Verdict {
  FailureKind kind = FailureKind::none;
  ErrorStats stats;
  std::string message;  // one line a person can act on; empty when passed
  bool passed() const { return kind == FailureKind::none; }
};

}  // namespace gpuemu::check
