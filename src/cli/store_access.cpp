// Store access for commands (see store_access.hpp). Replay prefers regeneration from the seed
// when the config is unchanged (exactly the same bytes) and falls back to the stored snapshot.
#include "cli/store_access.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "util/suggest.hpp"

namespace gpuemu::cli {

Expected<store::Store> open_store() {
  const auto path = TRY(store::default_db_path());
  return store::Store::open(path);
}

Expected<RunRecorder> RunRecorder::start(store::Store& store, const store::RunInfo& info, bool announce) {
  const auto run = TRY(store.begin_run(info));
  return RunRecorder(store, run, announce);
}

Expected<void> RunRecorder::on_case(const engine::CaseRecord& record) {
  if (record.verdict.passed()) return {};
  TRY(store_->record_failure(run_, record));
  ++stored_;
  if (announce_) std::fprintf(stderr, "stored failure %llu of %s\n", static_cast<unsigned long long>(record.seed), record.op.c_str());
  return {};
}

Expected<void> RunRecorder::finish(const engine::RunResult& result) {
  for (const auto& op : result.ops) TRY(store_->record_op_summary(run_, op));
  return store_->finish_run(run_, result);
}

Expected<ResolvedCase> resolve_case(Context& context, std::uint64_t seed, const std::string& op_name) {
  const config::Config& config = *TRY(context.config());
  ResolvedCase resolved;
  if (!context.globals.no_store) {
    auto store = open_store();
    if (store) {
      auto found = TRY(store->find_failure(seed, op_name.empty() ? std::nullopt : std::optional(op_name)));
      resolved.stored = std::move(found);
    } else if (op_name.empty()) {
      return std::unexpected(store.error());
    } else {
      context.log("gpuemu: warning: " + store.error().message + "; regenerating the case from its seed");
    }
  }
  const std::string name = resolved.stored ? resolved.stored->record.op : op_name;
  if (name.empty()) {
    return fail(ErrorKind::usage, fmt::format("seed {} is not in the store; pass --op NAME to regenerate the case "
                                              "from its seed",
                                              seed));
  }
  resolved.op = config.find_op(name);
  if (!resolved.op) {
    std::vector<std::string> known;
    for (const auto& o : config.ops) known.push_back(o.name);
    return fail(ErrorKind::usage, fmt::format("unknown op '{}'{} in {}", name, util::did_you_mean(name, known),
                                              config.project_file.string()));
  }
  const bool changed = resolved.stored && resolved.stored->config_digest != config.digest;
  const bool minimized = resolved.stored && resolved.stored->minimized_from.has_value();
  if ((changed || minimized) && resolved.stored->record.inputs) {
    if (changed) {
      context.log(fmt::format("gpuemu: the config changed since seed {} was stored (digest {} -> {}); replaying "
                              "from the stored input snapshot",
                              seed, resolved.stored->config_digest.substr(0, 12), config.digest.substr(0, 12)));
    }
    const auto& r = resolved.stored->record;
    resolved.c.op = r.op;
    resolved.c.seed = r.seed;
    resolved.c.params = r.params;
    resolved.c.dims = r.dims;
    resolved.c.inputs = *r.inputs;
    for (const auto& [input, t] : resolved.c.inputs) resolved.c.input_order.push_back(input);
    if (!resolved.op->input_names.empty()) resolved.c.input_order = resolved.op->input_names;
    resolved.from_snapshot = true;
    return resolved;
  }
  if (minimized) {
    return fail(ErrorKind::io, fmt::format("minimized case {} has no input snapshot in the store; minimize the "
                                           "original again",
                                           seed));
  }
  resolved.c = TRY(fuzz::generate_case(*resolved.op, seed));
  return resolved;
}

}  // namespace gpuemu::cli
