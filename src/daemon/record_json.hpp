// JSON forms the handlers share (docs/protocol.md "Result record"): result records of cases and
// stored failures, timestamps, and the named tensors of requests and replies.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/case_limits.hpp"
#include "config/config.hpp"
#include "daemon/request.hpp"
#include "result/run_result.hpp"
#include "store/rows.hpp"
#include "util/time.hpp"

namespace gpuemu::daemon {

// A case record with "passed", "timestamp", "duration_ms", "stored" (and "failure_id" when known).
nlohmann::json record_json(const result::CaseRecord& record, store::Millis at, std::int64_t duration_ms,
                           bool stored, std::optional<store::FailureId> failure_id = std::nullopt);
// A stored failure as a record, plus "failure_id", "run_id", "minimized_from", "has_snapshot".
nlohmann::json stored_failure_json(const store::StoredFailure& failure,
                                   const std::string& minimized_from_seed);

// Appends `inputs` to the reply as PREFIX + name, in `order` first, then the rest by name.
void add_tensors(Reply& reply, const tensor::NamedTensors& inputs, const std::vector<std::string>& order,
                 std::string_view prefix);
// A script path (relative to the project root) or module:function sent in `field` (op_script,
// against), resolved as the config resolves them.
Result<config::Runnable> runnable_field(const std::string& spelling, const config::Config& config,
                                        std::string_view field);

// Moves the request's tensors named PREFIX + name out of it (large tensors are not copied), by name.
tensor::NamedTensors take_tensors(Message& message, std::string_view prefix);

// A request's case size limits: its config's ([validation] max_case_elements, max_case_bytes),
// lowered (never raised) by the request's own "max_case_elements" / "max_case_bytes" fields.
Result<config::CaseLimits> request_limits(const config::Config& config, const Fields& fields);
// A bad_request naming the limit when `size` is over it (docs/protocol.md "Limits").
Result<void> check_case_size(const config::CaseSize& size, const config::CaseLimits& limits,
                             const std::string& what);
// The size of named tensors as their full views (a zero stride counts as the whole view).
config::CaseSize size_of(std::initializer_list<const tensor::NamedTensors*> tensors);

}  // namespace gpuemu::daemon
