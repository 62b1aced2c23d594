// Offline verification of a signed report: envelope, payload type, signature against a given
// public key, statement shape and, with an artifacts directory, every subject file's SHA-256.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attest/keys.hpp"

namespace gpuemu::attest {

namespace fs = std::filesystem;

enum class CheckStatus { passed, failed, skipped };

// One check and what it found; `message` says what failed and what to do about it.
struct Check {
  std::string name;  // "envelope", "payload type", "signature", "statement", "subject NAME"
  CheckStatus status = CheckStatus::passed;
  std::string message;
};

// What render_report prints about verification.
struct VerifyStatus {
  enum class State { not_checked, valid, invalid };
  State state = State::not_checked;
  std::string summary = "not verified";  // "valid: …by key 1a2b…", or "INVALID: " and the first failure
};

// Every check in order. A failed check skips the ones that depend on it: nothing in a payload
// whose signature failed is read. `statement` is set once the signature and shape passed.
struct VerifyReport {
  std::vector<Check> checks;
  std::optional<nlohmann::json> statement;

  bool valid() const;
  const Check* first_failure() const;
  VerifyStatus status() const;
};

VerifyReport verify(const nlohmann::json& envelope, const PublicKey& key,
                    const std::optional<fs::path>& artifacts_dir = std::nullopt);

}  // namespace gpuemu::attest
