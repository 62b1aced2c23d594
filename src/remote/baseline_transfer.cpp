// fetch_baseline and push_baseline over any BaselineStore: DSSE signing and verification of
// baseline documents, the content check, and the default-branch rule (should_push).
#include "remote/baseline_transfer.hpp"

#include <fmt/format.h>

#include "attest/dsse.hpp"
#include "util/json_text.hpp"

namespace gpuemu::remote {
namespace {

bool looks_like_envelope(const nlohmann::json& document) {
  return document.is_object() && document.contains("payloadType") && document.contains("payload") &&
         document.contains("signatures");
}

}  // namespace

Expected<std::string> sign_baseline(const std::string& bytes, const attest::PrivateKey& key) {
  const attest::Ed25519Signer signer(key);
  const auto envelope = TRY(attest::sign_envelope(kBaselinePayloadType, attest::bytes_of(bytes), signer));
  return envelope.dump();
}

Expected<Unwrapped> unwrap_baseline(const std::string& stored, const attest::PublicKey* key) {
  const auto document = nlohmann::json::parse(stored, nullptr, false);
  if (!looks_like_envelope(document)) {
    if (key) {
      return fail(ErrorKind::parse,
                  fmt::format("it is not signed, and a public key (key id {}) was given", key->key_id()));
    }
    return Unwrapped{stored, std::nullopt};
  }
  const auto envelope = TRY(attest::parse_envelope(document));
  if (envelope.payload_type != kBaselinePayloadType) {
    return fail(ErrorKind::parse, fmt::format("its envelope has payloadType '{}', not '{}'",
                                              envelope.payload_type, kBaselinePayloadType));
  }
  Unwrapped out{std::string(attest::text_of(envelope.payload)), std::nullopt};
  if (!key) return out;
  const auto message = attest::pae(envelope.payload_type, envelope.payload);
  for (const auto& signature : envelope.signatures) {
    if (key->verifies(message, signature.sig)) {
      out.signed_by = key->key_id();
      return out;
    }
  }
  return fail(ErrorKind::parse, fmt::format("none of its {} signature(s) verifies with key id {}",
                                            envelope.signatures.size(), key->key_id()));
}

Expected<BaselineFetch> fetch_baseline(const std::string& url_or_path, const FetchOptions& options) {
  TRY(check_tag(options.tag));
  BaselineFetch out;
  StoreOptions store_options = options.store;
  auto warn = [&out, outer = options.store.warn](std::string_view line) {
    out.warnings.emplace_back(line);
    if (outer) outer(line);
  };
  store_options.warn = warn;
  const auto store = TRY(open_store(url_or_path, store_options));
  out.source = store->describe();
  const auto stored = TRY(store->get(options.tag));
  if (!stored) return out;
  const auto document = nlohmann::json::parse(*stored, nullptr, false);
  if (document.is_discarded() || !looks_like_envelope(document))
    TRY(check_baseline_content(*stored, out.source));
  auto unwrapped = unwrap_baseline(*stored, options.public_key);
  if (!unwrapped) {
    warn(fmt::format("baseline at {} ignored: {}", out.source, unwrapped.error().message));
    return out;
  }
  TRY(check_baseline_content(unwrapped->bytes, out.source));
  out.document = nlohmann::json::parse(unwrapped->bytes);
  out.bytes = std::move(unwrapped->bytes);
  out.signed_by = std::move(unwrapped->signed_by);
  return out;
}

Expected<std::string> push_baseline(const std::string& url_or_path, const std::string& tag,
                                    const std::string& bytes, const PushOptions& options) {
  TRY(check_tag(tag));
  TRY(check_baseline_content(bytes, fmt::format("the baseline '{}' to push", tag)));
  const auto store = TRY(open_store(url_or_path, options.store));
  const std::string payload = options.sign_key ? TRY(sign_baseline(bytes, *options.sign_key)) : bytes;
  TRY(store->put(tag, payload));
  return store->describe();
}

PushDecision should_push(const Env& env, bool force) {
  if (force) return {true, "pushing because of --force"};
  const std::string main_branch = env.get("GPUEMU_DEFAULT_BRANCH").value_or("main");
  auto ref = env.get("GITHUB_REF");
  if (!ref) {
    const auto name = env.get("GITHUB_REF_NAME");
    if (!name) return {true, "not running in GitHub Actions (no GITHUB_REF): pushing"};
    ref = "refs/heads/" + *name;
  }
  if (env.get("GITHUB_EVENT_NAME").value_or("").starts_with("pull_request")) {
    return {false,
            fmt::format("not pushing: pull request runs ({}) never replace the baseline; pass --force to "
                        "push anyway",
                        *ref)};
  }
  if (*ref == "refs/heads/" + main_branch)
    return {true, fmt::format("pushing from the default branch {}", main_branch)};
  return {false,
          fmt::format("not pushing: GITHUB_REF is {}, not refs/heads/{}; baselines are pushed from the "
                      "default branch only (set GPUEMU_DEFAULT_BRANCH if it is not main, or pass --force)",
                      *ref, main_branch)};
}

}  // namespace gpuemu::remote
