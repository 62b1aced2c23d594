// The canonical JSON form of a loaded Config: what `gpuemu config show` can print and what the
// config digest hashes. Paths are relative to the project root so checkouts elsewhere agree.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace gpuemu::config {

// Every setting that affects a run; source locations (line numbers) are left out so comments
// and reordering do not change the digest. Seeds are decimal strings (u64 exact in JSON).
nlohmann::json to_json(const Config& config);

// Hex SHA-256 of to_json(config).dump() (object keys sorted, no whitespace).
std::string config_digest(const Config& config);

}  // namespace gpuemu::config
