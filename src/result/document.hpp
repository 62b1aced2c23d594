// result.json version 1 as typed values (docs/result-json.md): the one reader (from_json, which
// validates and names the first wrong field) and the one writer (to_json) every consumer goes through.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/run_result.hpp"
#include "util/error.hpp"

namespace gpuemu::result {

// The result.json schema version this code reads and writes. Bump only with a migration note in
// docs/result-json.md; readers reject other versions instead of guessing.
inline constexpr int kSchemaVersion = 1;

// The four error statistics of a case or an (op, dtype), possibly non-finite.
struct ErrorFigures {
  double max_abs = 0;
  double max_rel = 0;
  double max_ulp = 0;
  double tolerance_used = 0;  // worst |out - ref| / (atol + rtol·|ref|); above 1 fails
};

// A worst[] element of a failure: where it is and what both sides had.
struct WorstElement {
  std::string output;
  std::vector<std::int64_t> index;
  double actual = 0;
  double expected = 0;
  double abs_err = 0;
  double rel_err = 0;
};

// An ops[].failures[] entry. Kind, dtype, layout and distribution are kept as the document spells
// them: reports print and group by these names. Fields a version-1 reader tolerates missing read
// as "" / 0 / NaN (statistics) / empty, and are written back.
struct FailureEntry {
  std::uint64_t seed = 0;
  std::optional<std::uint64_t> case_index;  // "case"; absent in documents of early producers
  std::string op;
  std::string kind;
  std::string dtype;
  std::string layout;
  std::string distribution;
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::map<std::string, std::int64_t> dims;
  ErrorFigures figures;
  double atol = 0;
  double rtol = 0;
  std::int64_t mismatches = 0;
  std::int64_t elements = 0;
  std::string message;
  std::vector<WorstElement> worst;
  std::string stderr_text;  // "stderr"
  std::string replay;
  std::optional<std::string> corner;  // the corner case's name; absent for a random case
};

// An ops[].dtypes[] entry: one (op, dtype)'s totals and worst errors; a baseline entry without "op".
struct DtypeEntry {
  std::string dtype;
  std::int64_t total = 0;
  std::int64_t passed = 0;
  std::int64_t failed = 0;
  std::int64_t errors = 0;
  ErrorFigures figures;
  double atol = 0;
  double rtol = 0;
};

// An ops[] entry.
struct OpEntry {
  std::string op;
  std::optional<std::string> spec;  // only an implementation's entry has these two
  std::optional<std::string> implementation;
  std::string source;
  std::optional<OpStatus> written_status;  // "status"; absent in documents written before it
  std::int64_t total = 0;
  std::int64_t passed = 0;
  std::int64_t failed = 0;
  std::int64_t errors = 0;
  std::vector<DtypeEntry> dtypes;
  std::vector<FailureEntry> failures;
  std::optional<Timing> timing;
  std::optional<nlohmann::json> runtime;     // null when nothing ran the op here; absent in old documents
  std::vector<CornerCase> corners;           // "corners"; absent when empty
  std::vector<std::string> corners_dropped;  // "corners_dropped"; absent when empty
  std::optional<LaunchCounts> launches;      // "launches"; absent when no case counted any

  // The written status, or what the counts say: no case ran is not_run, never a pass.
  OpStatus status() const;
};

// A ci.baseline.regressions[] entry; before and after hold the statistics compared, as written.
struct RegressionEntry {
  std::string op;
  std::string dtype;
  std::string reason;
  nlohmann::json before;
  nlohmann::json after;
};

struct BaselineSection {
  std::string tag_or_source;
  std::vector<RegressionEntry> regressions;  // sorted by op, then dtype
  std::vector<std::string> warnings;
};

// The "ci" section of `gpuemu ci run`. `lint` stays the JSON `gpuemu lint --format json` wrote
// (validated by from_json): its types belong to `artifact`, a layer above this one.
struct CiSection {
  bool quick = false;
  std::optional<bool> allow_partial;
  std::optional<std::string> shard;  // "I/N"; null when unsharded or merged
  std::optional<BaselineSection> baseline;
  nlohmann::json lint;  // null, or {"kernels": [...], "passed": bool}
};

struct ToolInfo {
  std::string name = "gpuemu";
  std::string version;
};

// The whole document: what a run produced plus the gate's verdict and the CI context.
struct ResultDocument {
  ToolInfo tool;
  std::string command;
  bool passed = false;  // the gate's policy result, not only "no case failed"
  bool partial = false;
  std::uint64_t seed = 0;
  std::string config_digest;
  std::string project;
  double duration_secs = 0;
  std::optional<Timing> timing;             // the ops' timing summed; absent when the ops have none
  std::vector<OpEntry> ops;                 // sorted by op name
  std::optional<std::vector<CutCase>> cut;  // absent in documents written before 0.1.0
  std::vector<std::string> warnings;        // RunResult::warnings; absent (empty) when none
  std::optional<CiSection> ci;

  // Whether a partial result may pass (`ci run --allow-partial`).
  bool partial_allowed() const { return ci && ci->allow_partial.value_or(false); }
};

// The typed form of what the engine produced: tool = this gpuemu, passed = no case failed, ops
// sorted by name with their status and timing, cut cases sorted by (op, case).
ResultDocument make_document(const RunResult& result);
FailureEntry make_failure(const CaseRecord& record);
DtypeEntry make_dtype_entry(const DtypeSummary& summary);

// The one writer. Seeds are decimal strings; non-finite numbers the strings "NaN", "Infinity",
// "-Infinity"; optional fields absent when they are. to_json(from_json(d)) == d for every
// document gpuemu writes.
nlohmann::json to_json(const ResultDocument& document);
nlohmann::json to_json(const FailureEntry& failure);
nlohmann::json to_json(const DtypeEntry& entry);
nlohmann::json to_json(const BaselineSection& baseline);

// The one reader: validates `document` and decodes it. The error names `name` (a path, or
// "result.json") and the first offending field, e.g. "out/result.json: ops[3].failures[0].seed
// should be a seed as a decimal string, found 1234; ...". Unknown fields are ignored.
Expected<ResultDocument> from_json(const nlohmann::json& document, std::string_view name = "result.json");

// Reads, parses and decodes a result.json file; errors name the file.
Expected<ResultDocument> load_document(const std::filesystem::path& path);
// Reads and parses it without decoding (report merge decodes each shard under its name).
Expected<nlohmann::json> read_document_json(const std::filesystem::path& path);

// A number as result.json writes it: a JSON number, or one of the strings "NaN", "Infinity",
// "-Infinity". Anything else (null, a missing field) reads as NaN.
double decode_number(const nlohmann::json& value);

}  // namespace gpuemu::result
