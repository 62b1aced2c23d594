// A signed report over the fixture project, made in a scratch directory: keys, a copy of the
// project, a tool "binary", and the envelope. Tests then tamper with any part of it.
#pragma once

#include "attest/dsse.hpp"
#include "attest/keys.hpp"
#include "attest/statement.hpp"
#include "attest_test_util.hpp"

namespace gpuemu::attest::testing {

struct SignedFixture {
  ScratchDir scratch;
  fs::path project = scratch.path() / "project";
  fs::path keys_dir = scratch.path() / "keys";
  nlohmann::json statement;
  nlohmann::json envelope;
  std::string key_id;

  // Signs at a fixed instant so statements compare exactly.
  static constexpr std::chrono::sys_seconds kSignedAt{std::chrono::seconds{1767225600}};  // 2026-01-01

  SignedFixture() {
    copy_project(project);
    write_text(project / "gpuemu", "stand-in for the gpuemu binary\n");
    auto keys = generate_keys(keys_dir, Overwrite::refuse);
    EXPECT_TRUE(keys);
    key_id = keys->key_id;
    auto built = build_statement(fixture_result(), subjects(), kSignedAt);
    EXPECT_TRUE(built) << built.error().message;
    statement = *built;
    auto priv = load_private_key(keys_dir / kPrivateKeyFile, KeyAccess::owner_only);
    EXPECT_TRUE(priv);
    auto signed_statement = sign_statement(statement, Ed25519Signer(*priv));
    EXPECT_TRUE(signed_statement) << signed_statement.error().message;
    envelope = *signed_statement;
  }

  std::vector<SubjectFile> subjects() const {
    return collect_subjects(project, {"kernels/softmax.py", "kernels/matmul.py"},
                            {"reference/softmax_ref.py", "reference/matmul_ref.py"}, project / "gpuemu");
  }

  nlohmann::json sign(const nlohmann::json& payload, std::string_view type = kPayloadType) const {
    auto priv = load_private_key(keys_dir / kPrivateKeyFile, KeyAccess::owner_only);
    EXPECT_TRUE(priv);
    auto signed_envelope = sign_envelope(type, bytes_of(payload.dump()), Ed25519Signer(*priv));
    EXPECT_TRUE(signed_envelope);
    return *signed_envelope;
  }

  PublicKey public_key() const { return *load_public_key(keys_dir / kPublicKeyFile); }
};

}  // namespace gpuemu::attest::testing
