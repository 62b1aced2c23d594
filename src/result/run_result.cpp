// JSON form of run results (docs/result-json.md) and the replay command line.
// Seeds travel as decimal strings so JavaScript and other double-only readers keep them exact.
#include "result/run_result.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "result/document.hpp"

namespace gpuemu::result {

bool RunResult::passed() const {
  for (const auto& op : ops) {
    if (op.failed > 0 || op.errors > 0) return false;
  }
  return true;
}

OpStatus op_status(const OpResult& op) {
  if (op.total == 0) return OpStatus::not_run;
  return op.failed > 0 || op.errors > 0 ? OpStatus::failed : OpStatus::passed;
}

std::string_view op_status_name(OpStatus status) {
  switch (status) {
    case OpStatus::passed:
      return "passed";
    case OpStatus::failed:
      return "failed";
    case OpStatus::not_run:
      return "not_run";
  }
  return "not_run";
}

double Timing::gpuemu_secs() const {
  return std::max(0.0, wall_secs - op_secs - reference_secs + overlap_secs);
}

Timing& Timing::operator+=(const Timing& other) {
  wall_secs += other.wall_secs;
  op_secs += other.op_secs;
  reference_secs += other.reference_secs;
  overlap_secs += other.overlap_secs;
  return *this;
}

nlohmann::json timing_to_json(const Timing& t) {
  const double gpuemu = t.gpuemu_secs();
  return {{"wall_secs", t.wall_secs},
          {"op_secs", t.op_secs},
          {"reference_secs", t.reference_secs},
          {"overlap_secs", t.overlap_secs},
          {"gpuemu_secs", gpuemu},
          {"gpuemu_share", t.wall_secs > 0 ? gpuemu / t.wall_secs : 0.0}};
}

std::string replay_command(const CaseRecord& record) {
  return fmt::format("gpuemu reproduce {} --op {}", record.seed, record.op);
}

// One writer for all of them: document_writer.cpp.
nlohmann::json case_to_json(const CaseRecord& record) {
  return to_json(make_failure(record));
}

nlohmann::json dtype_summary_to_json(const DtypeSummary& summary) {
  return to_json(make_dtype_entry(summary));
}

nlohmann::json to_json(const RunResult& result) {
  return to_json(make_document(result));
}

}  // namespace gpuemu::result
