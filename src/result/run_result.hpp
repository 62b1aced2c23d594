// The outcome of a test or fuzz run, as the engine produces it and every consumer reads it:
// the CLI's text and JSON output, the store, and the CI reports (docs/result-json.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/tolerance.hpp"
#include "check/verdict.hpp"
#include "fuzz/case.hpp"
#include "tensor/tensor.hpp"
#include "util/json_number.hpp"

namespace gpuemu::result {

// Where a case's (or an op's, summed) time went: wall = op + reference - overlap + gpuemu's own
// share. op_secs and reference_secs are measured inside the worker or script; overlap_secs is the
// time both ran at once, which the sum would count twice (docs/result-json.md).
struct Timing {
  double wall_secs = 0;
  double op_secs = 0;
  double reference_secs = 0;
  double overlap_secs = 0;
  double gpuemu_secs() const;  // the wall when neither ran, never below 0
  Timing& operator+=(const Timing& other);
};

// One case that did not pass, with everything needed to show, store and replay it.
struct CaseRecord {
  std::string op;
  std::uint64_t seed = 0;
  std::uint64_t index = 0;  // position of the case in its op's unsharded plan ("case" in JSON)
  fuzz::CaseParams params;
  std::map<std::string, std::int64_t> dims;
  std::map<std::string, tensor::Shape> shapes;
  check::ToleranceSpec tolerance;
  check::Verdict verdict;
  std::string corner;       // the corner's name when the case is one of the op's corner cases
  std::string stderr_tail;  // of the script that failed, for op_error / reference_error
  // The case's inputs (as the op received them) for the store's snapshot; may be null.
  std::shared_ptr<const tensor::NamedTensors> inputs;
  // Killed at the run's time budget before it finished (RunFailure::cut): not a verdict.
  bool cut = false;
  Timing timing;
  nlohmann::json runtime;  // what ran the op, as its worker reported it; null when unknown
  // The op's @triton.jit launches in this case's call, per kernel, under the Triton interpreter;
  // unset when its worker counted none (no Triton, a GPU run, a client-side result).
  std::optional<std::map<std::string, std::int64_t>> launches;
};

// Totals and worst errors of one (op, dtype).
struct DtypeSummary {
  tensor::DType dtype = tensor::DType::float32;
  int total = 0;
  int passed = 0;
  int failed = 0;  // numerical / invariant / shape failures
  int errors = 0;  // op_error / reference_error
  double max_abs = 0;
  double max_rel = 0;
  double max_ulp = 0;
  double tolerance_used = 0;  // worst fraction of the tolerance used by a passing case
  check::ToleranceSpec tolerance;
};

// An op's @triton.jit launches under the Triton interpreter, summed over its cases ("launches" in
// result.json): a green case means the kernel ran, and which kernels did.
struct LaunchCounts {
  std::int64_t calls = 0;                       // calls of the op that counted their launches
  std::int64_t without_launch = 0;              // of those, the calls that launched no kernel
  std::map<std::string, std::int64_t> kernels;  // launches per kernel name
  bool operator==(const LaunchCounts&) const = default;
};

// A corner case of an op's plan (fuzz/corners.hpp): where it is and which corner it is.
struct CornerCase {
  std::uint64_t index = 0;  // position in its op's unsharded plan, as CaseRecord::index
  std::uint64_t seed = 0;
  std::string name;
  bool operator==(const CornerCase&) const = default;
};

struct OpResult {
  std::string op;              // the op's unique name: "softmax", or "softmax/v2" for an implementation
  std::string spec;            // "softmax" for an implementation, else ""
  std::string implementation;  // "v2" for an implementation, else ""
  std::string source;          // [[ops]] source, written or inferred, for reports ("path:line" or path)
  int total = 0;
  int passed = 0;
  int failed = 0;
  int errors = 0;
  std::vector<DtypeSummary> dtypes;
  std::vector<CaseRecord> failures;  // in case order
  Timing timing;                     // summed over the op's cases
  // What ran the op (framework, version, device, Triton/Pallas interpreter or GPU), from its
  // cases; null when no case reported it (client-side runs, an op that never ran).
  nlohmann::json runtime;
  std::vector<CornerCase> corners;           // the corner cases of the op's plan, in plan order
  std::vector<std::string> corners_dropped;  // corners the plan had no room for (OpPlan)
  std::optional<LaunchCounts> launches;      // unset when no case counted launches
};

// A case that was still running when the run's time budget ran out, and was killed.
struct CutCase {
  std::string op;
  std::uint64_t seed = 0;
  std::uint64_t index = 0;  // position in its op's unsharded plan, as CaseRecord::index
  std::string message;      // who was cut, after how long
};

// How an op came out. An op of which no case ran is not_run, never passed (docs/ci.md).
enum class OpStatus { passed, failed, not_run };
OpStatus op_status(const OpResult& op);
std::string_view op_status_name(OpStatus status);

struct RunResult {
  std::string command;  // "test", "fuzz", "reproduce", "ci"
  std::uint64_t master_seed = 0;
  std::string config_digest;
  std::string project;
  bool partial = false;  // stopped by a time budget or --fail-fast before all cases ran
  double duration_secs = 0;
  std::vector<OpResult> ops;
  std::vector<CutCase> cut;  // cases killed at the time budget (then partial is true), in plan order
  // What passed but deserves a look: [policies] warn_threshold exceeded, checks skipped for a
  // missing tool. Never a failure.
  std::vector<std::string> warnings;

  // No case failed. Whether a partial run (or an op not run) may pass is the caller's policy:
  // `ci run` fails it unless --allow-partial.
  bool passed() const;
};

// The JSON document of `--format json` (docs/result-json.md). Seeds are decimal strings;
// non-finite numbers are written as the strings "NaN", "Infinity", "-Infinity".
nlohmann::json to_json(const RunResult& result);
nlohmann::json case_to_json(const CaseRecord& record);
// One (op, dtype) entry of result.json's "dtypes" and of a baseline's "entries" (without "op").
nlohmann::json dtype_summary_to_json(const DtypeSummary& summary);
// {"wall_secs", "op_secs", "reference_secs", "gpuemu_secs", "gpuemu_share"}.
nlohmann::json timing_to_json(const Timing& timing);
// result.json spells non-finite numbers as util::json_number does.
using util::json_number;

// The one-line command that replays a case.
std::string replay_command(const CaseRecord& record);

}  // namespace gpuemu::result
