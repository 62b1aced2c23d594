// Tests of attest/verify.hpp: a signed report verifies, and each kind of tampering (payload
// byte, signature, subject file, another key, payload type, statement shape) fails its own check.
#include "attest/verify.hpp"

#include "signed_fixture.hpp"
#include "util/base64.hpp"

namespace gpuemu::attest {
namespace {

using nlohmann::json;
using testing::SignedFixture;

std::string failure_of(const VerifyReport& report) {
  const Check* failed = report.first_failure();
  return failed ? failed->name + ": " + failed->message : "valid";
}

TEST(Verify, SignedReportIsValidWithEveryCheckPassed) {
  SignedFixture f;
  auto report = verify(f.envelope, f.public_key(), f.project);
  EXPECT_TRUE(report.valid()) << failure_of(report);
  std::vector<std::string> names;
  for (const auto& check : report.checks) {
    names.push_back(check.name);
    EXPECT_EQ(check.status, CheckStatus::passed) << check.name << ": " << check.message;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"envelope", "signature", "payload type", "statement",
                                             "subject kernels/softmax.py", "subject kernels/matmul.py",
                                             "subject reference/softmax_ref.py",
                                             "subject reference/matmul_ref.py", "subject gpuemu"}));
  ASSERT_TRUE(report.statement);
  EXPECT_EQ(*report.statement, f.statement);
  EXPECT_EQ(report.status().state, VerifyStatus::State::valid);
  EXPECT_EQ(report.status().summary, "valid: valid Ed25519 signature by key " + f.key_id);
}

TEST(Verify, WithoutArtifactsOnlyTheSignedContentIsChecked) {
  SignedFixture f;
  auto report = verify(f.envelope, f.public_key());
  EXPECT_TRUE(report.valid()) << failure_of(report);
  EXPECT_EQ(report.checks.size(), 4u);
}

TEST(Verify, OnePayloadByteChangedFailsTheSignature) {
  SignedFixture f;
  auto payload = *util::base64_decode(f.envelope["payload"].get<std::string>());
  std::string text(text_of(payload));
  auto at = text.find("\"passed\":39");
  ASSERT_NE(at, std::string::npos);
  text[at + 10] = '8';  // claim 38 passed... or any one byte
  json tampered = f.envelope;
  tampered["payload"] = util::base64_encode(bytes_of(text));
  auto report = verify(tampered, f.public_key(), f.project);
  EXPECT_FALSE(report.valid());
  EXPECT_EQ(failure_of(report),
            "signature: signature does not match the report: the payload or the signature was changed after "
            "signing by key " +
                f.key_id + "; ask the vendor for the original report");
  EXPECT_FALSE(report.statement);  // nothing from an unverified payload is handed out
}

TEST(Verify, ChangedSignatureFails) {
  SignedFixture f;
  auto sig = *util::base64_decode(f.envelope["signatures"][0]["sig"].get<std::string>());
  sig[10] ^= std::byte{0x01};
  json tampered = f.envelope;
  tampered["signatures"][0]["sig"] = util::base64_encode(sig);
  auto report = verify(tampered, f.public_key(), f.project);
  EXPECT_EQ(report.first_failure()->name, "signature");
  EXPECT_NE(report.first_failure()->message.find("changed after signing"), std::string::npos);
}

TEST(Verify, AnotherKeyIsNamed) {
  SignedFixture f;
  testing::ScratchDir other;
  auto keys = generate_keys(other.path(), Overwrite::refuse);
  ASSERT_TRUE(keys);
  auto report = verify(f.envelope, *load_public_key(keys->public_key), f.project);
  EXPECT_EQ(failure_of(report),
            "signature: signature is not from the given public key: the report was signed by "
            "key " +
                f.key_id + ", but --pub is key " + keys->key_id + "; verify with the signer's gpuemu.pub");
}

TEST(Verify, KeyidIsOnlyAHint) {
  SignedFixture f;
  // Relabelling the signature with another keyid changes the message, never the verdict.
  json relabelled = f.envelope;
  relabelled["signatures"][0]["keyid"] = "ffffffffffffffff";
  EXPECT_TRUE(verify(relabelled, f.public_key()).valid());
  json unlabelled = f.envelope;
  unlabelled["signatures"][0].erase("keyid");
  EXPECT_TRUE(verify(unlabelled, f.public_key()).valid());
}

TEST(Verify, ChangedSubjectFileFails) {
  SignedFixture f;
  testing::write_text(f.project / "kernels/softmax.py",
                      testing::read_text(f.project / "kernels/softmax.py") + "#\n");
  auto report = verify(f.envelope, f.public_key(), f.project);
  EXPECT_FALSE(report.valid());
  const Check* failed = report.first_failure();
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->name, "subject kernels/softmax.py");
  EXPECT_EQ(failed->message.rfind("subject 'kernels/softmax.py' changed since signing: sha256 of '" +
                                      (f.project / "kernels/softmax.py").string() + "' is ",
                                  0),
            0u)
      << failed->message;
  // The other subjects are still reported, each on its own.
  EXPECT_EQ(report.checks.back().status, CheckStatus::passed);
}

TEST(Verify, MissingSubjectFileFails) {
  SignedFixture f;
  fs::remove(f.project / "reference/matmul_ref.py");
  auto report = verify(f.envelope, f.public_key(), f.project);
  EXPECT_EQ(failure_of(report),
            "subject reference/matmul_ref.py: subject 'reference/matmul_ref.py' is missing: no "
            "file '" +
                (f.project / "reference/matmul_ref.py").string() +
                "'; pass the project directory the report was made from as --artifacts");
}

TEST(Verify, AbsentToolBinaryIsSkippedButAChangedOneFails) {
  SignedFixture f;
  fs::remove(f.project / "gpuemu");
  auto report = verify(f.envelope, f.public_key(), f.project);
  EXPECT_TRUE(report.valid()) << failure_of(report);
  EXPECT_EQ(report.checks.back().status, CheckStatus::skipped);

  testing::write_text(f.project / "gpuemu", "another build\n");
  report = verify(f.envelope, f.public_key(), f.project);
  EXPECT_EQ(report.first_failure()->name, "subject gpuemu");
}

TEST(Verify, WrongPayloadTypeFailsEvenWhenSigned) {
  SignedFixture f;
  auto report = verify(f.sign(f.statement, "application/json"), f.public_key());
  EXPECT_EQ(failure_of(report),
            "payload type: payloadType is \"application/json\", expected "
            "\"application/vnd.in-toto+json\": this is not a gpuemu report");
}

TEST(Verify, SignedButMalformedStatementFails) {
  SignedFixture f;
  json statement = f.statement;
  statement["predicate"].erase("config_digest");
  auto report = verify(f.sign(statement), f.public_key());
  EXPECT_EQ(failure_of(report), "statement: statement predicate: config_digest is missing");

  report = verify(f.sign("just a string"), f.public_key());
  EXPECT_EQ(failure_of(report), "statement: statement: the payload is not a JSON object");
}

TEST(Verify, SubjectNamesCannotEscapeTheArtifactsDirectory) {
  SignedFixture f;
  json statement = f.statement;
  statement["subject"][0]["name"] = "../../etc/hostname";
  auto report = verify(f.sign(statement), f.public_key(), f.project);
  EXPECT_EQ(failure_of(report),
            "subject ../../etc/hostname: subject '../../etc/hostname' is not a relative path "
            "inside the artifacts directory");
}

TEST(Verify, BrokenEnvelopeFailsTheEnvelopeCheck) {
  SignedFixture f;
  json broken = f.envelope;
  broken["payload"] = "%%%";
  auto report = verify(broken, f.public_key());
  EXPECT_EQ(failure_of(report), "envelope: envelope: payload is not valid base64");
  EXPECT_EQ(report.status().state, VerifyStatus::State::invalid);
  EXPECT_EQ(report.status().summary, "INVALID: envelope: payload is not valid base64");
}

}  // namespace
}  // namespace gpuemu::attest
