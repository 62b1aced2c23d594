// Signing a result.json as a Kernel Correctness Report: shared by `report sign` and
// `ci run --sign-key`, so both name the same subjects (op and reference files) the same way.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "attest/keys.hpp"
#include "config/config.hpp"
#include "util/error.hpp"

namespace gpuemu::cli {

struct SignedReport {
  std::string key_id;
  std::size_t subjects = 0;
};

// Signs `result` (made with `config`) with the Ed25519 key at `key_path` and writes the DSSE
// envelope to `out`. Subjects are the op and reference scripts, named relative to `root`.
Expected<SignedReport> sign_result(const nlohmann::json& result, const config::Config& config,
                                   const std::filesystem::path& root, const std::filesystem::path& key_path,
                                   attest::KeyAccess key_access, const std::filesystem::path& out);

}  // namespace gpuemu::cli
