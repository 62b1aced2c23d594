// reproduce and minimize: find a stored failure by seed (engine/replay.hpp, the same resolution as
// the CLI), re-run it or shrink it with the real op and reference, and store the minimal case.
#include <fmt/format.h>

#include "daemon/record_json.hpp"
#include "daemon/request_table.hpp"
#include "engine/minimize.hpp"
#include "engine/replay.hpp"

namespace gpuemu::daemon {
namespace {

struct Resolved {
  std::shared_ptr<const config::Config> config;
  engine::ResolvedCase replay;
};

Result<Resolved> resolve(DaemonState& state, const Message& message, const Fields& fields,
                         std::uint64_t seed) {
  Resolved r;
  r.config = TRY(state.config(message.header));
  const auto op = TRY(fields.optional_string("op")).value_or("");
  auto replay = engine::resolve_case(*r.config, &state.store(), seed, op,
                                     [&](const std::string& line) { state.log(line); });
  if (!replay) {
    const bool missing = replay.error().kind == ErrorKind::usage && op.empty();
    return reject(
        missing ? WireError::not_found : RequestError(replay.error()).kind,
        missing ? fmt::format("seed {} is not in the store; send \"op\" to regenerate the case from its seed",
                              seed)
                : replay.error().message);
  }
  r.replay = std::move(*replay);
  return r;
}

nlohmann::json shapes_json(const fuzz::Case& c) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, t] : c.inputs) shapes[name] = t.shape;
  return shapes;
}

}  // namespace

Result<Reply> handle_reproduce(DaemonState& state, Message& message, const Fields& fields) {
  const auto seed = TRY(fields.seed("seed"));
  const auto resolved = TRY(resolve(state, message, fields, seed));
  const auto& replay = resolved.replay;
  Reply reply;
  const nlohmann::json original = replay.stored ? stored_failure_json(*replay.stored, "") : nlohmann::json();
  reply.header["original"] = original;
  reply.header["from_snapshot"] = replay.from_snapshot;
  add_tensors(reply, replay.c.inputs, replay.c.input_order, "input/");
  // "client_runs_op": the client replays with its own run_op (Client.reproduce(seed, run_op=f)), so
  // the daemon must not run the op's module/op_script in its place.
  if (replay.op->op_script.empty() || TRY(fields.flag("client_runs_op", false))) {
    // The op runs on the client: hand back the case for the client to run and submit.
    reply.header["result"] = original;
    reply.header["reproduced"] = false;
    reply.header["needs_client"] = true;
    return reply;
  }
  const auto started = std::chrono::steady_clock::now();
  auto session = state.session(resolved.config, *replay.op);
  const auto record = TRY(session->run_case(replay.c));
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  reply.header["result"] = record_json(record, util::now_millis(), took.count(), false);
  reply.header["reproduced"] = !record.verdict.passed() &&
                               (!replay.stored || replay.stored->record.verdict.kind == record.verdict.kind);
  reply.header["needs_client"] = false;
  return reply;
}

Result<Reply> handle_minimize(DaemonState& state, Message& message, const Fields& fields) {
  const auto seed = TRY(fields.seed("seed"));
  engine::MinimizeOptions options;
  const auto strategy_name = TRY(fields.optional_string("strategy")).value_or("all");
  const auto strategy = engine::parse_minimize_strategy(strategy_name);
  if (!strategy) {
    return reject(WireError::bad_request,
                  fmt::format("minimize request: strategy '{}' is not dims, values or all", strategy_name));
  }
  options.strategy = *strategy;
  options.max_iters = static_cast<int>(TRY(fields.optional_int("max_iters", 1, 100000)).value_or(200));
  const auto resolved = TRY(resolve(state, message, fields, seed));
  const auto& replay = resolved.replay;
  if (replay.op->op_script.empty()) {
    return reject(
        WireError::bad_request,
        fmt::format("op '{}' runs on the client (no op_script), so the daemon cannot re-run it: shrink the "
                    "case on the client (reproduce gives its inputs) and send each smaller case with "
                    "submit_output and \"minimized_from\": \"{}\"",
                    replay.op->name, seed));
  }
  auto session = state.session(resolved.config, *replay.op);
  const auto result = TRY(engine::minimize(*session, replay.c, options));

  store::FailureId original_id = 0;
  if (replay.stored && replay.stored->record.seed == seed) {
    original_id = replay.stored->id;
  } else {
    const auto run =
        TRY(state.store().begin_run({"minimize", 0, resolved.config->digest, resolved.config->project.name}));
    original_id = TRY(state.store().record_failure(run, result.original));
  }
  const auto minimized_id = TRY(state.store().record_minimized(original_id, result.minimized));
  const auto at = util::now_millis();
  Reply reply;
  auto original = record_json(result.original, at, 0, true, original_id);
  original["shapes"] = shapes_json(replay.c);
  auto minimized = record_json(result.minimized, at, 0, true, minimized_id);
  minimized["shapes"] = shapes_json(result.minimized_case);
  reply.header = {{"original", std::move(original)}, {"minimized", minimized}, {"result", minimized}};
  reply.header.update(engine::search_json(result, options));
  add_tensors(reply, result.minimized_case.inputs, result.minimized_case.input_order, "input/");
  return reply;
}

}  // namespace gpuemu::daemon
