// Runs the plain-OpenSSL verification recipes of docs/verify.md, exactly as the page shows
// them, with the real openssl CLI against reports gpuemu signed, and against tampered copies.
#include "signed_fixture.hpp"
#include "util/base64.hpp"

namespace gpuemu::attest {
namespace {

using nlohmann::json;
using testing::SignedFixture;

// The ```sh block that follows "<!-- recipe: NAME -->" in docs/verify.md.
std::string recipe(std::string_view name) {
  std::string doc = testing::read_text(fs::path(GPUEMU_SOURCE_DIR) / "docs/verify.md");
  auto marker = doc.find("<!-- recipe: " + std::string(name) + " -->");
  EXPECT_NE(marker, std::string::npos) << "docs/verify.md has no recipe " << name;
  auto start = doc.find("```sh\n", marker);
  auto end = doc.find("\n```\n", start);
  EXPECT_TRUE(start != std::string::npos && end != std::string::npos);
  start += 6;
  return doc.substr(start, end - start + 1);
}

// Writes REPORT.json and gpuemu.pub into a fresh directory and runs the recipe there.
testing::CommandResult run_recipe(std::string_view name, const json& report, const SignedFixture& f,
                                  const testing::ScratchDir& dir) {
  testing::write_text(dir.path() / "REPORT.json", report.dump(2));
  fs::copy_file(f.keys_dir / kPublicKeyFile, dir.path() / "gpuemu.pub", fs::copy_options::overwrite_existing);
  testing::write_text(dir.path() / "recipe.sh", recipe(name));
  return testing::run_command("ARTIFACTS='" + f.project.string() + "' bash -eo pipefail recipe.sh",
                              dir.path());
}

json with_payload(const json& envelope, std::string text) {
  json out = envelope;
  out["payload"] = util::base64_encode(bytes_of(text));
  return out;
}

std::string payload_of(const json& envelope) {
  return std::string(text_of(*util::base64_decode(envelope["payload"].get<std::string>())));
}

class Recipe : public ::testing::TestWithParam<const char*> {};

TEST_P(Recipe, OpensslAcceptsTheSignedReport) {
  SignedFixture f;
  testing::ScratchDir dir;
  auto result = run_recipe(GetParam(), f.envelope, f, dir);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Signature Verified Successfully"), std::string::npos) << result.output;
  EXPECT_EQ(json::parse(testing::read_text(dir.path() / "statement.json")), f.statement);
}

TEST_P(Recipe, OpensslRejectsOneChangedPayloadByte) {
  SignedFixture f;
  std::string text = payload_of(f.envelope);
  auto at = text.find("\"passed\":39");
  ASSERT_NE(at, std::string::npos);
  text[at + 9] = '4';  // 39 -> 49 passed
  testing::ScratchDir dir;
  auto result = run_recipe(GetParam(), with_payload(f.envelope, text), f, dir);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("Signature Verification Failure"), std::string::npos) << result.output;
}

TEST_P(Recipe, OpensslRejectsAnotherPayloadTypeAndAnotherKey) {
  SignedFixture f;
  json retyped = f.envelope;
  retyped["payloadType"] = "application/json";
  testing::ScratchDir dir;
  auto result = run_recipe(GetParam(), retyped, f, dir);
  EXPECT_EQ(result.exit_code, 1) << result.output;

  SignedFixture other;  // same statement, signed by a different key
  testing::ScratchDir dir2;
  result = run_recipe(GetParam(), other.envelope, f, dir2);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("Signature Verification Failure"), std::string::npos) << result.output;
}

INSTANTIATE_TEST_SUITE_P(VerifyMd, Recipe, ::testing::Values("python", "jq"));

TEST(RecipeSubjects, Sha256sumChecksTheSignedDigests) {
  SignedFixture f;
  testing::ScratchDir dir;
  auto verified = run_recipe("python", f.envelope, f, dir);
  ASSERT_EQ(verified.exit_code, 0) << verified.output;
  testing::write_text(dir.path() / "recipe.sh", recipe("subjects"));
  const std::string run = "ARTIFACTS='" + f.project.string() + "' bash -eo pipefail recipe.sh";

  auto good = testing::run_command(run, dir.path());
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("kernels/softmax.py: OK"), std::string::npos) << good.output;
  EXPECT_EQ(good.output.find("gpuemu: "), std::string::npos) << good.output;

  testing::write_text(f.project / "reference/softmax_ref.py", "tampered\n");
  auto bad = testing::run_command(run, dir.path());
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("reference/softmax_ref.py: FAILED"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace gpuemu::attest
