// fuzz and test: whole runs on the daemon's job threads, as `gpuemu fuzz` / `gpuemu test` run them
// (same plans, same result document), each failure stored as it happens. A fuzz may name its own
// op under test (a script or module:function): the client-supplied op.
#include <fmt/format.h>

#include <filesystem>

#include "daemon/record_json.hpp"
#include "daemon/request_table.hpp"
#include "engine/autotune_variants.hpp"
#include "engine/plans.hpp"
#include "engine/store_recorder.hpp"
#include "result/document.hpp"
#include "util/hash.hpp"

namespace gpuemu::daemon {
namespace {

// The request's config: the loaded one, or a copy whose op has the request's dtypes, layouts or
// op_script. The copy gets its own digest: its cases do not regenerate from the file's config, so
// their failures replay from the stored input snapshots.
Result<std::shared_ptr<const config::Config>> request_config(std::shared_ptr<const config::Config> config,
                                                             const std::string& op_name,
                                                             const Fields& fields) {
  const auto dtypes = TRY(fields.optional_strings("dtypes"));
  const auto layouts = TRY(fields.optional_strings("layouts"));
  const auto op_script = TRY(fields.optional_string("op_script"));
  if (!dtypes && !layouts && !op_script) return config;
  auto copy = std::make_shared<config::Config>(*config);
  auto it = std::find_if(copy->ops.begin(), copy->ops.end(),
                         [&](const config::OpConfig& o) { return o.name == op_name; });
  if (it == copy->ops.end()) return config;
  // Parsed from the same fields: the digest below keeps the names as the request spelled them.
  if (dtypes) it->dtypes = *TRY(fields.optional_choices("dtypes", tensor::parse_dtype, kDtypeChoices));
  if (layouts) it->layouts = *TRY(fields.optional_choices("layouts", tensor::parse_layout, kLayoutChoices));
  copy->digest =
      util::sha256_hex(config->digest + "\n" + op_name + "\n" +
                       nlohmann::json({{"dtypes", dtypes ? nlohmann::json(*dtypes) : nlohmann::json()},
                                       {"layouts", layouts ? nlohmann::json(*layouts) : nlohmann::json()},
                                       {"op_script", op_script.value_or("")}})
                           .dump());
  if (op_script) {
    it->op_script = TRY(runnable_field(*op_script, *copy, "op_script"));
    if (it->execution_mode != config::ExecutionMode::script_based)
      it->execution_mode = config::ExecutionMode::script_based;
  }
  return std::shared_ptr<const config::Config>(std::move(copy));
}

// A run the daemon executed and recorded: its result and where the store keeps it.
struct RecordedRun {
  result::RunResult result;
  store::RunId run_id = 0;
  int stored = 0;
};

Result<RecordedRun> execute_and_store(DaemonState& state, const config::Config& config,
                                      const engine::RunPlan& plan) {
  auto recorder = TRY(engine::RunRecorder::start(
      state.store(), {plan.command, plan.master_seed, config.digest, config.project.name}));
  recorder.set_after_store([&state]() -> Expected<void> {
    if (state.stopping)
      return fail(ErrorKind::io, "the daemon is shutting down; failures found so far are stored");
    return {};
  });
  auto result = engine::execute(config, plan, &recorder);
  if (!result) {
    if (state.stopping) return reject(WireError::shutting_down, result.error().message);
    return std::unexpected(RequestError(result.error()));
  }
  TRY(recorder.finish(*result));
  return RecordedRun{std::move(*result), recorder.run_id(), recorder.stored_failures()};
}

// The config with every autotune config of the ops `names` selects as a variant of its op, as the CLI
// runs them (engine/autotune_variants.hpp); the run's load check then reuses this one's answers.
Result<std::shared_ptr<const config::Config>> with_variants(
    const std::shared_ptr<const config::Config>& loaded, const std::vector<std::string>& names) {
  auto copy = std::make_shared<config::Config>(*loaded);
  TRY(engine::expand_autotune_variants(*copy, names));
  return std::shared_ptr<const config::Config>(std::move(copy));
}

Result<int> jobs(const Fields& fields, const config::Config& config) {
  return static_cast<int>(TRY(fields.optional_int("jobs", 1, 256)).value_or(config.ci.parallel_jobs));
}

}  // namespace

Result<Reply> handle_fuzz(DaemonState& state, Message& message, const Fields& fields) {
  const auto loaded = TRY(state.config(message.header));
  // "op" (one op, which dtypes/layouts/op_script may adjust) or "ops" (default: every runnable op).
  const auto op_name = TRY(fields.optional_string("op")).value_or("");
  engine::Selection selection;
  auto config = loaded;
  if (!op_name.empty()) {
    TRY(state.op(*loaded, op_name));
    config = TRY(request_config(loaded, op_name, fields));
    selection.ops = {op_name};
  } else if (auto ops = TRY(fields.optional_strings("ops"))) {
    selection.ops = *ops;
    config = TRY(with_variants(loaded, selection.ops));
  } else {
    config = TRY(with_variants(loaded, {}));
  }
  selection.dtype = TRY(fields.optional_choice("dtype", tensor::parse_dtype, kDtypeChoices));
  selection.layout = TRY(fields.optional_choice("layout", tensor::parse_layout, kLayoutChoices));
  selection.values = TRY(fields.optional_choice("values", rng::parse_distribution, kValuesChoices));
  const std::uint64_t master = engine::resolve_master_seed(TRY(fields.optional_seed("seed")), *config);
  const auto iterations =
      TRY(fields.optional_int("iterations", 0, 1000000)).value_or(config->validation.fuzz_iterations);
  auto plan = TRY(engine::plan_fuzz(*config, selection, master, static_cast<int>(iterations)));
  plan.jobs = TRY(jobs(fields, *config));
  plan.fail_fast = TRY(fields.flag("fail_fast", false));
  state.log(fmt::format("fuzz {} x{} seed {}", op_name.empty() ? "(all ops)" : op_name, iterations, master));
  const auto outcome = TRY(execute_and_store(state, *config, plan));

  Reply reply;
  const auto& r = outcome.result;
  nlohmann::json failures = nlohmann::json::array();
  int total = 0, passed = 0, failed = 0, errors = 0;
  const auto at = util::now_millis();
  for (const auto& op : r.ops) {
    total += op.total;
    passed += op.passed;
    failed += op.failed;
    errors += op.errors;
    for (const auto& f : op.failures) failures.push_back(record_json(f, at, 0, true));
  }
  reply.header = {{"seed", std::to_string(master)},
                  {"op", op_name.empty() ? nlohmann::json() : nlohmann::json(op_name)},
                  {"total", total},
                  {"passed", passed},
                  {"failed", failed + errors},
                  {"errors", errors},
                  {"partial", r.partial},
                  {"duration_ms", static_cast<std::int64_t>(r.duration_secs * 1000)},
                  {"run_id", outcome.run_id},
                  {"failures", std::move(failures)},
                  {"result", result::to_json(r)}};
  return reply;
}

Result<Reply> handle_test(DaemonState& state, Message& message, const Fields& fields) {
  engine::Selection selection;
  if (auto ops = TRY(fields.optional_strings("ops"))) selection.ops = *ops;
  const auto config = TRY(with_variants(TRY(state.config(message.header)), selection.ops));
  selection.dtype = TRY(fields.optional_choice("dtype", tensor::parse_dtype, kDtypeChoices));
  const std::uint64_t master = engine::resolve_master_seed(TRY(fields.optional_seed("seed")), *config);
  const auto cases = TRY(fields.optional_int("cases", 1, 100000)).value_or(config->validation.test_cases);
  auto plan = TRY(engine::plan_test(*config, selection, master, static_cast<int>(cases)));
  plan.jobs = TRY(jobs(fields, *config));
  plan.fail_fast = TRY(fields.flag("fail_fast", false));
  engine::bound_by_thorough_timeout(plan, *config);  // as `gpuemu test` (docs/configuration.md "[ci]")
  auto outcome = TRY(execute_and_store(state, *config, plan));
  const auto stopped = engine::thorough_timeout_stop(*config, plan, outcome.result);
  if (stopped) outcome.result.warnings.push_back(*stopped);
  auto document = result::make_document(outcome.result);
  if (stopped) document.passed = false;
  Reply reply;
  reply.header = {{"result", result::to_json(document)}, {"run_id", outcome.run_id}};
  return reply;
}

}  // namespace gpuemu::daemon
