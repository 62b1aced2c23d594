// The CLI's use of the SQLite store: opening it at $GPUEMU_HOME/db/gpuemu.db, recording runs as
// they happen, and finding stored cases again by seed (for reproduce, show and minimize).
#pragma once

#include <optional>

#include "cli/command.hpp"
#include "engine/executor.hpp"
#include "engine/replay.hpp"
#include "engine/store_recorder.hpp"
#include "fuzz/case.hpp"
#include "store/store.hpp"

namespace gpuemu::cli {

Expected<store::Store> open_store();

// For reading only (--no-store means "record nothing", never "read nothing"): the store when its
// database file exists, else nothing, so a read never creates $GPUEMU_HOME/db/gpuemu.db.
Expected<std::optional<store::Store>> open_existing_store();

// Recording runs and resolving stored cases live in the store module (shared with the daemon).
using RunRecorder = engine::RunRecorder;
using ResolvedCase = engine::ResolvedCase;

// Finds the case of `seed`: the newest stored failure with that seed (of `op_name` if given);
// replays from the input snapshot when the config changed since or the case was minimized;
// otherwise regenerates it from the seed (which needs op_name when the store has nothing).
Expected<ResolvedCase> resolve_case(Context& context, std::uint64_t seed, const std::string& op_name);

// resolve_case, then the check that the op's and its reference's modules load, so that reproduce
// and minimize name a missing module before they run the case.
Expected<ResolvedCase> resolve_loadable_case(Context& context, std::uint64_t seed,
                                             const std::string& op_name);

}  // namespace gpuemu::cli
