// Finding stored cases again (for reproduce, minimize, show and the daemon): the case of a seed,
// replayed from its input snapshot or regenerated from the seed, and the entries of a stored run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "engine/baseline_document.hpp"
#include "fuzz/case.hpp"
#include "store/store.hpp"

namespace gpuemu::engine {

// Cases whose inputs came from a client (the daemon's validate and submit_output) are stored under
// this prefix + the config digest: their values need not come from the seed, so they always replay
// from the snapshot.
inline constexpr std::string_view kClientInputsDigestPrefix = "client-inputs:";
inline std::string client_inputs_digest(const std::string& config_digest) {
  return std::string(kClientInputsDigestPrefix) + config_digest;
}

// A case to re-run, from the store (snapshot or seed) or regenerated from the seed.
struct ResolvedCase {
  const config::OpConfig* op = nullptr;
  fuzz::Case c;
  std::optional<store::StoredFailure> stored;  // when it came from the store
  bool from_snapshot = false;
};

using WarnFn = std::function<void(const std::string&)>;

// Finds the case of `seed`: the newest stored failure with that seed (of `op_name` if given) in
// `store` (may be null: no store); replays from the input snapshot when the config changed since,
// the case was minimized or its inputs came from a client; otherwise regenerates it from the seed
// (which needs op_name when the store has nothing).
Expected<ResolvedCase> resolve_case(const config::Config& config, const store::Store* store,
                                    std::uint64_t seed, const std::string& op_name, const WarnFn& warn);

// The per-(op, dtype) entries of run `run_id`, or (run_id <= 0) of the newest finished run that is
// not a reproduce or minimize (a test, fuzz or ci run, or a client's validation through the daemon).
Expected<std::pair<store::StoredRun, std::vector<BaselineEntry>>> run_entries(const store::Store& store,
                                                                              std::int64_t run_id);

}  // namespace gpuemu::engine
