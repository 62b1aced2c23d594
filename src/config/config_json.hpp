// The canonical JSON form of a loaded Config, which the config digest hashes (result.json's
// config_digest; no command prints it). Paths are relative to the project root so checkouts
// elsewhere agree.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace gpuemu::config {

// Every setting that affects a run; source locations (line numbers) are left out so comments
// and reordering do not change the digest. Seeds are decimal strings (u64 exact in JSON).
nlohmann::json to_json(const Config& config);

// Pieces of that form the key table's digest writers share (config/key_table.cpp): a path
// relative to the project root, dtype names, per-dtype {atol, rtol}.
std::string root_relative(const fs::path& path, const fs::path& root);
nlohmann::json dtypes_json(const std::vector<tensor::DType>& dtypes);
nlohmann::json tolerances_json(const std::map<tensor::DType, check::ToleranceSpec>& tolerances);

// Hex SHA-256 of to_json(config).dump() (object keys sorted, no whitespace).
std::string config_digest(const Config& config);

}  // namespace gpuemu::config
