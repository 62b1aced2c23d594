// The columns of the store's reads and writes, each list written once: the SQL text is made from
// these arrays, and every bind and read names its column, so no position is counted by hand.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuemu::store::columns {

// failures, as record_failure and the minimizer write them (in ?N order).
inline constexpr std::array<std::string_view, 24> kFailureWrite = {
    "run_id",         "op",         "seed",           "config_digest",
    "dtype",          "layout",     "distribution",   "dims",
    "shapes",         "kind",       "max_abs",        "max_rel",
    "max_ulp",        "mismatches", "elements",       "mismatch_fraction",
    "tolerance_used", "worst",      "message",        "stderr_tail",
    "atol",           "rtol",       "minimized_from", "created_at"};

// Whether a failure has an input snapshot, as a column of the failure reads.
inline constexpr std::string_view kHasSnapshot =
    "EXISTS (SELECT 1 FROM snapshots s WHERE s.failure_id = f.id)";

// failures f LEFT JOIN runs r, as list_failures, find_failure and friends read them.
inline constexpr std::array<std::string_view, 27> kFailureRead = {"f.id",
                                                                  "f.run_id",
                                                                  "f.op",
                                                                  "f.seed",
                                                                  "f.config_digest",
                                                                  "f.dtype",
                                                                  "f.layout",
                                                                  "f.distribution",
                                                                  "f.dims",
                                                                  "f.shapes",
                                                                  "f.kind",
                                                                  "f.max_abs",
                                                                  "f.max_rel",
                                                                  "f.max_ulp",
                                                                  "f.mismatches",
                                                                  "f.elements",
                                                                  "f.mismatch_fraction",
                                                                  "f.tolerance_used",
                                                                  "f.worst",
                                                                  "f.message",
                                                                  "f.stderr_tail",
                                                                  "f.atol",
                                                                  "f.rtol",
                                                                  "f.minimized_from",
                                                                  "f.created_at",
                                                                  "r.master_seed",
                                                                  kHasSnapshot};

// results, one row per (run, op, dtype), as record_op_summary upserts them.
inline constexpr std::array<std::string_view, 15> kResultWrite = {
    "run_id",  "op",      "source",  "dtype",          "total", "passed", "failed",    "errors",
    "max_abs", "max_rel", "max_ulp", "tolerance_used", "atol",  "rtol",   "created_at"};

// results x JOIN runs r, as list_results reads them.
inline constexpr std::array<std::string_view, 17> kResultRead = {
    "x.id",      "x.run_id",  "r.command",        "x.op",     "x.source", "x.created_at",
    "x.dtype",   "x.total",   "x.passed",         "x.failed", "x.errors", "x.max_abs",
    "x.max_rel", "x.max_ulp", "x.tolerance_used", "x.atol",   "x.rtol"};

// The failures of a run that are not minimized cases, as a column of the run reads.
inline constexpr std::string_view kRunFailures =
    "(SELECT count(*) FROM failures f WHERE f.run_id = r.id AND f.minimized_from IS NULL)";

// runs r, as list_runs reads them.
inline constexpr std::array<std::string_view, 11> kRunRead = {
    "r.id",          "r.command",       "r.master_seed", "r.config_digest", "r.project", "r.started_at",
    "r.finished_at", "r.duration_secs", "r.partial",     "r.passed",        kRunFailures};

// The 0-based position of `name` in `list`, for column reads; a name not in the list does not
// compile.
template <std::size_t N>
consteval int at(const std::array<std::string_view, N>& list, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (list[i] == name) return static_cast<int>(i);
  }
  throw "no such column in the list";
}

// The 0-based position of column `name` of the table `alias` ('f' finds "f.max_abs"), for reads
// shared by lists of different tables; a name not in the list does not compile.
template <std::size_t N>
consteval int at(const std::array<std::string_view, N>& list, char alias, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    const std::string_view column = list[i];
    if (column.size() == name.size() + 2 && column[0] == alias && column[1] == '.' &&
        column.substr(2) == name) {
      return static_cast<int>(i);
    }
  }
  throw "no such column in the list";
}

// The 1-based parameter (?N) of `name` in `list`, for binds.
template <std::size_t N>
consteval int param(const std::array<std::string_view, N>& list, std::string_view name) {
  return at(list, name) + 1;
}

// "a, b, c": the list as SQL.
template <std::size_t N>
std::string joined(const std::array<std::string_view, N>& list) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += ", ";
    out += list[i];
  }
  return out;
}

// "?1, ?2, ..., ?N": one parameter per column of `list`.
template <std::size_t N>
std::string placeholders(const std::array<std::string_view, N>&) {
  std::string out;
  for (std::size_t i = 1; i <= N; ++i) {
    if (i > 1) out += ", ";
    out += "?" + std::to_string(i);
  }
  return out;
}

}  // namespace gpuemu::store::columns
