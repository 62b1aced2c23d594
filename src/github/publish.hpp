// Publishing a result on GitHub Actions (docs/ci.md): error annotations worst first with replay
// commands, scripts' stderr in the log with workflow commands stopped, the job summary, and the
// step outputs `passed`, `failed`, `result`.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "github/environment.hpp"
#include "result/document.hpp"
#include "util/error.hpp"

namespace gpuemu::github {

// GitHub shows at most 10 error annotations per step; the rest would be silently dropped.
inline constexpr std::size_t kMaxAnnotations = 10;

struct PublishOptions {
  std::string result_path;  // where result.json was written: the `result` step output
  std::size_t max_annotations = kMaxAnnotations;
};

// Writes workflow commands to `log` (the runner reads them from the step's output) and appends to
// the files the environment names.
Expected<void> publish(const result::ResultDocument& result, const Environment& env, std::ostream& log,
                       const PublishOptions& options = {});

// The pieces of publish(), for callers that want only some of them.
void write_annotations(const result::ResultDocument& result, const Environment& env, std::ostream& log,
                       std::size_t max_annotations = kMaxAnnotations);
Expected<void> append_summary(const result::ResultDocument& result, const Environment& env);
Expected<void> write_outputs(const result::ResultDocument& result, const Environment& env,
                             const std::string& result_path);

// Failing cases of the run (failed + errors over all ops): the `failed` output.
long long failing_cases(const result::ResultDocument& result);
// Ops of which no case ran (status not_run): the `not_run` output.
long long not_run_ops(const result::ResultDocument& result);

}  // namespace gpuemu::github
