// Pulling and pushing baseline documents through a BaselineStore: content checks, signing with
// Ed25519 in a DSSE envelope, verification on pull, and the default-branch rule for pushes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attest/keys.hpp"
#include "remote/baseline_store.hpp"

namespace gpuemu::remote {

// The DSSE payload type of a signed baseline.
inline constexpr std::string_view kBaselinePayloadType = "application/vnd.gpuemu.baseline+json";

struct FetchOptions {
  StoreOptions store;
  std::string tag = "main";
  const attest::PublicKey* public_key = nullptr;  // set: unsigned or badly signed baselines are ignored
};

// What a pull found. No document is not a failure: `warnings` says why ("no baseline at URL: ...").
struct BaselineFetch {
  std::string source;                // redacted location
  std::optional<std::string> bytes;  // the baseline document (unwrapped when it was signed)
  std::optional<nlohmann::json> document;
  std::optional<std::string> signed_by;  // key id, when a signature was verified
  std::vector<std::string> warnings;
};

// Fetches the baseline of `options.tag` from a URL (any scheme open_store knows) or a local path.
// 404, a missing file, an unreachable store or a rejected signature give no document plus a
// warning; wrong content, refused credentials and other errors are errors.
Expected<BaselineFetch> fetch_baseline(const std::string& url_or_path, const FetchOptions& options);

struct PushOptions {
  StoreOptions store;
  const attest::PrivateKey* sign_key = nullptr;  // set: the document is pushed inside a DSSE envelope
};

// Checks `bytes` is a baseline document, signs it when a key is given, and stores it under `tag`.
// Returns the redacted location written.
Expected<std::string> push_baseline(const std::string& url_or_path, const std::string& tag,
                                    const std::string& bytes, const PushOptions& options);

// The signed form of a document: a DSSE envelope (JSON text) over the exact bytes.
Expected<std::string> sign_baseline(const std::string& bytes, const attest::PrivateKey& key);

// The document inside a stored baseline. A DSSE envelope is unwrapped; with `key`, it must carry a
// valid signature by that key and a plain document is refused. The error says why, for a warning.
struct Unwrapped {
  std::string bytes;
  std::optional<std::string> signed_by;
};
Expected<Unwrapped> unwrap_baseline(const std::string& stored, const attest::PublicKey* key);

// Whether this run may push baselines: only pushes to the default branch do, unless forced.
struct PushDecision {
  bool push = false;
  std::string reason;  // one line, for the log
};
// Reads GITHUB_REF (or GITHUB_REF_NAME) and GITHUB_EVENT_NAME; the default branch is
// GPUEMU_DEFAULT_BRANCH, else "main". Outside GitHub Actions (no GITHUB_REF) a push is allowed.
PushDecision should_push(const Env& env, bool force);

}  // namespace gpuemu::remote
