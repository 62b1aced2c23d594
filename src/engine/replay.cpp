// Replay resolution (see replay.hpp). Replay prefers regeneration from the seed when the config is
// unchanged (exactly the same bytes) and falls back to the stored snapshot.
#include "engine/replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/suggest.hpp"

namespace gpuemu::engine {
namespace {

fuzz::Case case_from_snapshot(const store::StoredFailure& stored, const config::OpConfig& op) {
  const auto& r = stored.record;
  fuzz::Case c;
  c.op = r.op;
  c.seed = r.seed;
  c.params = r.params;
  c.dims = r.dims;
  c.inputs = *r.inputs;
  for (const auto& [input, t] : c.inputs) c.input_order.push_back(input);
  if (!op.input_names.empty()) {
    const bool all_known = std::all_of(op.input_names.begin(), op.input_names.end(),
                                       [&](const std::string& n) { return c.inputs.count(n) > 0; });
    if (all_known) c.input_order = op.input_names;
  }
  return c;
}

}  // namespace

Expected<ResolvedCase> resolve_case(const config::Config& config, const store::Store* store,
                                    std::uint64_t seed, const std::string& op_name, const WarnFn& warn) {
  ResolvedCase resolved;
  // An op with implementations or autotune variants names a family: the case belongs to the one that
  // stored it.
  std::vector<std::string> family;
  for (const auto& o : config.ops) {
    if (o.name != op_name && (o.spec == op_name || (o.autotune && o.autotune->of == op_name)))
      family.push_back(o.name);
  }
  if (store && family.empty()) {
    resolved.stored = TRY(store->find_failure(seed, op_name.empty() ? std::nullopt : std::optional(op_name)));
  } else if (store) {
    for (const auto& member : family) {
      auto found = TRY(store->find_failure(seed, member));
      if (found && (!resolved.stored || found->id > resolved.stored->id)) resolved.stored = std::move(found);
    }
  }
  if (!resolved.stored && !family.empty()) {
    std::string names;
    for (const auto& member : family) names += (names.empty() ? "" : ", ") + member;
    return fail(ErrorKind::usage,
                fmt::format("seed {} of op '{}' is not in the store, and the op has several "
                            "implementations ({}); pass --op {} (or another) to regenerate the "
                            "case",
                            seed, op_name, names, family.front()));
  }
  const std::string name = resolved.stored ? resolved.stored->record.op : op_name;
  if (name.empty()) {
    return fail(ErrorKind::usage,
                fmt::format("seed {} is not in the store; pass --op NAME to regenerate the case "
                            "from its seed",
                            seed));
  }
  resolved.op = config.find_op(name);
  if (!resolved.op) {
    std::vector<std::string> known;
    for (const auto& o : config.ops) known.push_back(o.name);
    return fail(ErrorKind::usage,
                fmt::format("unknown op '{}'{} in {}", name, util::did_you_mean_suffix(name, known),
                            config.project_file.string()));
  }
  const auto* stored = resolved.stored ? &*resolved.stored : nullptr;
  const bool client = stored && stored->config_digest.starts_with(kClientInputsDigestPrefix);
  const bool changed = stored && !client && stored->config_digest != config.digest;
  const bool minimized = stored && stored->minimized_from.has_value();
  if ((changed || minimized || client) && stored->record.inputs) {
    if (changed && warn) {
      warn(
          fmt::format("the config changed since seed {} was stored (digest {} -> {}); replaying from the "
                      "stored input snapshot",
                      seed, stored->config_digest.substr(0, 12), config.digest.substr(0, 12)));
    }
    resolved.c = case_from_snapshot(*stored, *resolved.op);
    resolved.from_snapshot = true;
    return resolved;
  }
  if (minimized || client) {
    return fail(ErrorKind::io, fmt::format("{} case {} has no input snapshot in the store; {}",
                                           minimized ? "minimized" : "client-supplied", seed,
                                           minimized ? "minimize the original again" : "submit it again"));
  }
  resolved.c = TRY(fuzz::generate_case(*resolved.op, seed));
  return resolved;
}

Expected<std::pair<store::StoredRun, std::vector<BaselineEntry>>> run_entries(const store::Store& store,
                                                                              std::int64_t run_id) {
  store::Query all;
  all.limit = 0;
  const auto runs = TRY(store.list_runs(all));
  const store::StoredRun* chosen = nullptr;
  for (const auto& r : runs) {
    const auto& command = r.info.command;
    const bool candidate = run_id > 0
                               ? r.id == run_id
                               : r.finished_at.has_value() && command != "minimize" && command != "reproduce";
    if (candidate) {
      chosen = &r;
      break;
    }
  }
  if (!chosen) {
    return fail(ErrorKind::usage, run_id > 0
                                      ? fmt::format("no run {} in the store; see gpuemu results", run_id)
                                      : std::string("no finished run in the store yet: run gpuemu test or "
                                                    "gpuemu fuzz first"));
  }
  std::vector<BaselineEntry> entries;
  for (const auto& r : TRY(store.list_results(all))) {
    if (r.run_id == chosen->id) entries.push_back({r.op, r.summary});
  }
  std::reverse(entries.begin(), entries.end());  // list_results is newest first
  return std::pair{*chosen, entries};
}

}  // namespace gpuemu::engine
