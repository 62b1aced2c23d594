// Store queries and baselines: get_result, list_results, list_failures, store_baseline.
#include <fmt/format.h>

#include "daemon/record_json.hpp"
#include "daemon/request_table.hpp"
#include "engine/baseline_document.hpp"
#include "engine/replay.hpp"

namespace gpuemu::daemon {
namespace {

nlohmann::json result_row(const store::StoredResult& r, const std::optional<store::StoredRun>& run) {
  const auto& s = r.summary;
  // The (op, dtype) entry of result.json, with "passed" as the row's verdict and the count of
  // passing cases as "passed_cases" (docs/protocol.md).
  nlohmann::json row = result::dtype_summary_to_json(s);
  row["passed_cases"] = s.passed;
  row["passed"] = s.failed == 0 && s.errors == 0;
  row["kind"] = s.failed == 0 && s.errors == 0 ? "none" : "mismatch";
  row["run_id"] = r.run_id;
  row["command"] = r.command;
  row["seed"] = run ? nlohmann::json(std::to_string(run->info.master_seed)) : nlohmann::json();
  row["op"] = r.op;
  row["timestamp"] = util::iso_time(r.created_at);
  return row;
}

Result<std::map<store::RunId, store::StoredRun>> runs_by_id(const store::Store& store) {
  store::Query all;
  all.limit = 0;
  std::map<store::RunId, store::StoredRun> out;
  for (auto& run : TRY(store.list_runs(all))) out.emplace(run.id, std::move(run));
  return out;
}

// The seed a minimized failure came from, for "minimized_from".
Result<std::string> original_seed(const store::Store& store, const store::StoredFailure& f) {
  if (!f.minimized_from) return std::string();
  const auto original = TRY(store.get_failure(*f.minimized_from));
  return original ? std::to_string(original->record.seed) : std::string();
}

}  // namespace

Result<Reply> handle_get_result(DaemonState& state, Message&, const Fields& fields) {
  const auto seed = TRY(fields.seed("seed"));
  const auto op = TRY(fields.optional_string("op"));
  Reply reply;
  if (const auto failure = TRY(state.store().find_failure(seed, op))) {
    auto doc = stored_failure_json(*failure, TRY(original_seed(state.store(), *failure)));
    reply.header["result"] = std::move(doc);
    return reply;
  }
  // A passing client-side validation is stored as a run whose master seed is the case seed.
  const auto runs = TRY(runs_by_id(state.store()));
  store::Query all;
  all.limit = 0;
  if (op) all.op = op;
  reply.header["result"] = nullptr;
  for (const auto& r : TRY(state.store().list_results(all))) {
    const auto run = runs.find(r.run_id);
    if (run == runs.end() || run->second.info.master_seed != seed) continue;
    if ((r.command != "validate" && r.command != "submit_output") || r.summary.total == 0) continue;
    reply.header["result"] = result_row(r, run->second);
    break;
  }
  return reply;
}

Result<Reply> handle_list_results(DaemonState& state, Message&, const Fields& fields) {
  store::Query query;
  query.op = TRY(fields.optional_string("op"));
  query.limit = static_cast<int>(TRY(fields.optional_int("limit", 0, 100000)).value_or(100));
  const auto runs = TRY(runs_by_id(state.store()));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : TRY(state.store().list_results(query))) {
    const auto run = runs.find(r.run_id);
    rows.push_back(result_row(r, run == runs.end() ? std::nullopt : std::optional(run->second)));
  }
  Reply reply;
  reply.header["results"] = std::move(rows);
  return reply;
}

Result<Reply> handle_list_failures(DaemonState& state, Message&, const Fields& fields) {
  store::Query query;
  query.op = TRY(fields.optional_string("op"));
  query.limit = static_cast<int>(TRY(fields.optional_int("limit", 0, 100000)).value_or(20));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& f : TRY(state.store().list_failures(query))) {
    rows.push_back(stored_failure_json(f, TRY(original_seed(state.store(), f))));
  }
  Reply reply;
  reply.header["failures"] = std::move(rows);
  return reply;
}

Result<Reply> handle_store_baseline(DaemonState& state, Message&, const Fields& fields) {
  const auto tag = TRY(fields.string("tag"));
  if (tag.empty()) return reject(WireError::bad_request, "store_baseline request: \"tag\" is empty");
  const auto run_id = TRY(fields.optional_int("run_id", 1, std::int64_t{1} << 62)).value_or(0);
  const auto [run, entries] = TRY(engine::run_entries(state.store(), run_id));
  TRY(state.store().store_baseline(
      tag, engine::make_baseline(tag, run.info.config_digest, run.info.master_seed, entries)));
  state.log(fmt::format("baseline '{}' = run {} ({} entries)", tag, run.id, entries.size()));
  Reply reply;
  reply.header = {{"tag", tag}, {"run_id", run.id}, {"entries", entries.size()}};
  return reply;
}

}  // namespace gpuemu::daemon
