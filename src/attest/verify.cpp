// Offline verification of a signed report (see verify.hpp), in the order DSSE prescribes:
// decode, verify the signature over the PAE, then check the type and parse the payload.
#include "attest/verify.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "attest/dsse.hpp"
#include "attest/statement.hpp"
#include "util/hash.hpp"

namespace gpuemu::attest {
namespace {

bool has_dotdot(const fs::path& path) {
  for (const auto& part : path) {
    if (part == "..") return true;
  }
  return false;
}

Check check_signature(const Envelope& envelope, const PublicKey& key) {
  auto message = pae(envelope.payload_type, envelope.payload);
  std::vector<std::string> named;
  for (const auto& sig : envelope.signatures) {
    if (key.verifies(message, sig.sig)) {
      return {"signature", CheckStatus::passed, "valid Ed25519 signature by key " + key.key_id()};
    }
    if (!sig.keyid.empty()) named.push_back(sig.keyid);
  }
  // The keyid is an unauthenticated hint (DSSE): it only chooses the message, never the verdict.
  bool signed_by_this_key =
      named.empty() || std::find(named.begin(), named.end(), key.key_id()) != named.end();
  if (signed_by_this_key) {
    return {"signature", CheckStatus::failed,
            fmt::format("signature does not match the report: the payload or the signature was changed "
                        "after signing by key {}; ask the vendor for the original report",
                        key.key_id())};
  }
  std::string ids;
  for (const auto& id : named) ids += (ids.empty() ? "" : ", ") + id;
  return {"signature", CheckStatus::failed,
          fmt::format("signature is not from the given public key: the report was signed by key {}, but "
                      "--pub is key {}; verify with the signer's gpuemu.pub",
                      ids, key.key_id())};
}

Check check_subject(const nlohmann::json& subject, const fs::path& dir) {
  const auto name = subject["name"].get<std::string>();
  const auto expected = subject["digest"]["sha256"].get<std::string>();
  Check check{"subject " + name, CheckStatus::passed, ""};
  if (fs::path(name).is_absolute() || has_dotdot(name)) {
    check.status = CheckStatus::failed;
    check.message = "subject '" + name + "' is not a relative path inside the artifacts directory";
    return check;
  }
  fs::path path = dir / name;
  std::error_code ec;
  bool is_tool = subject.value("annotations", nlohmann::json::object()).value("gpuemu.role", "") == "tool";
  if (!fs::is_regular_file(path, ec)) {
    if (is_tool) {
      check.status = CheckStatus::skipped;
      check.message = "the gpuemu binary that made the report is not in '" + dir.string() +
                      "'; copy it there as '" + name + "' to check it too";
      return check;
    }
    check.status = CheckStatus::failed;
    check.message = fmt::format(
        "subject '{}' is missing: no file '{}'; pass the project directory the "
        "report was made from as --artifacts",
        name, path.string());
    return check;
  }
  auto actual = util::sha256_file_hex(path);
  if (!actual) {
    check.status = CheckStatus::failed;
    check.message = actual.error().message;
  } else if (*actual != expected) {
    check.status = CheckStatus::failed;
    check.message =
        fmt::format("subject '{}' changed since signing: sha256 of '{}' is {}, the report says {}", name,
                    path.string(), *actual, expected);
  } else {
    check.message = "sha256 " + expected;
  }
  return check;
}

}  // namespace

bool VerifyReport::valid() const {
  return !checks.empty() && first_failure() == nullptr;
}

const Check* VerifyReport::first_failure() const {
  for (const auto& check : checks) {
    if (check.status == CheckStatus::failed) return &check;
  }
  return nullptr;
}

VerifyStatus VerifyReport::status() const {
  if (const Check* failed = first_failure()) {
    return {VerifyStatus::State::invalid, "INVALID: " + failed->message};
  }
  if (checks.empty()) return {VerifyStatus::State::not_checked, "not verified"};
  std::string summary = "valid";
  for (const auto& check : checks) {
    if (check.name == "signature") summary += ": " + check.message;
  }
  return {VerifyStatus::State::valid, summary};
}

VerifyReport verify(const nlohmann::json& json, const PublicKey& key,
                    const std::optional<fs::path>& artifacts_dir) {
  VerifyReport report;
  auto fail_here = [&](std::string name, std::string message) {
    report.checks.push_back({std::move(name), CheckStatus::failed, std::move(message)});
    return report;
  };
  auto envelope = parse_envelope(json);
  if (!envelope) return fail_here("envelope", envelope.error().message);
  report.checks.push_back(
      {"envelope", CheckStatus::passed,
       "DSSE envelope with " + std::to_string(envelope->signatures.size()) + " signature(s)"});
  Check signature = check_signature(*envelope, key);
  report.checks.push_back(signature);
  if (signature.status == CheckStatus::failed) return report;

  if (envelope->payload_type != kPayloadType) {
    return fail_here("payload type",
                     fmt::format("payloadType is \"{}\", expected \"{}\": this is not a gpuemu "
                                 "report",
                                 envelope->payload_type, kPayloadType));
  }
  report.checks.push_back({"payload type", CheckStatus::passed, std::string(kPayloadType)});

  auto statement = nlohmann::json::parse(text_of(envelope->payload), nullptr, false);
  if (statement.is_discarded()) return fail_here("statement", "the signed payload is not JSON");
  if (auto shape = check_statement(statement); !shape) return fail_here("statement", shape.error().message);
  report.checks.push_back(
      {"statement", CheckStatus::passed,
       fmt::format("in-toto Statement v1 with {} subject(s)", statement["subject"].size())});
  if (artifacts_dir) {
    for (const auto& subject : statement["subject"])
      report.checks.push_back(check_subject(subject, *artifacts_dir));
  }
  report.statement = std::move(statement);
  return report;
}

}  // namespace gpuemu::attest
