// Policy packs (config/policy_pack.hpp): every bundled pack is compiled in from policies/*.toml,
// loads, and sets what its file says; bad packs fail with the file, line, caret and a fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "../support/temp_dir.hpp"
#include "config/loader.hpp"
#include "config/policy_pack.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using namespace fixtures;

namespace fs = std::filesystem;

const fs::path kPolicies = fs::path(GPUEMU_SOURCE_DIR) / "policies";

Config project(const std::string& extra = "") {
  auto c = load_config_text(kOp + extra, kPath);
  EXPECT_TRUE(c) << c.error().message;
  return *c;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A pack file in a temporary directory of the test binary's, named as the test wants.
fs::path write_pack(const std::string& name, const std::string& text) {
  static const gpuemu::testing::TempDir dir("gpuemu-policy-pack-test");
  const fs::path file = dir / name;
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

TEST(PolicyPack, EveryFileInPoliciesIsBundledWithItsCurrentText) {
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(kPolicies)) {
    if (entry.path().extension() == ".toml") on_disk.insert(entry.path().stem().string());
  }
  std::set<std::string> bundled;
  for (const BundledPolicyPack& pack : bundled_policy_packs()) {
    bundled.insert(std::string(pack.name));
    EXPECT_EQ(pack.file, "policies/" + std::string(pack.name) + ".toml");
    EXPECT_EQ(pack.text, read(kPolicies / pack.file.substr(9))) << pack.name << ": rebuild to re-embed it";
  }
  EXPECT_EQ(bundled, on_disk);
  EXPECT_EQ(bundled, (std::set<std::string>{"default", "llm-kernels", "strict"}));
}

TEST(PolicyPack, EveryBundledPackLoadsOnTheDefaults) {
  for (const BundledPolicyPack& pack : bundled_policy_packs()) {
    Config c = project();
    auto applied = apply_policy_pack(c, std::string(pack.name));
    EXPECT_TRUE(applied) << pack.name << ": " << applied.error().message;
  }
}

TEST(PolicyPack, DefaultSetsTheRecommendedGateAndKeepsTheProjectsCi) {
  Config c = project("[ci]\nparallel_jobs = 4\nquick_iterations = 7\n");
  ASSERT_TRUE(apply_policy_pack(c, "default"));
  EXPECT_TRUE(c.policies.fail_on_regression);
  EXPECT_EQ(c.policies.warn_threshold, 0.8);
  EXPECT_EQ(c.policies.max_error_growth, 2.0);
  EXPECT_EQ(
      c.policies.artifact_thresholds,
      (std::map<std::string, double>{{"registers", 1.1}, {"spills", 1.0}, {"local_memory_bytes", 1.0}}));
  EXPECT_EQ(c.ci.parallel_jobs, 4);
  EXPECT_EQ(c.ci.quick_iterations, 7);
}

TEST(PolicyPack, StrictTightensThresholdsAndQuickRuns) {
  Config c = project("[ci]\nparallel_jobs = 3\n");
  ASSERT_TRUE(apply_policy_pack(c, "strict"));
  EXPECT_TRUE(c.policies.fail_on_regression);
  EXPECT_EQ(c.policies.warn_threshold, 0.5);
  EXPECT_EQ(c.policies.max_error_growth, 1.25);
  EXPECT_EQ(c.policies.artifact_thresholds, (std::map<std::string, double>{{"registers", 1.0},
                                                                           {"spills", 1.0},
                                                                           {"local_memory_bytes", 1.0},
                                                                           {"shared_memory_bytes", 1.0},
                                                                           {"stack_frame_bytes", 1.0}}));
  EXPECT_EQ(c.ci.quick_dtypes, (std::vector<tensor::DType>{tensor::DType::float32, tensor::DType::float16,
                                                           tensor::DType::bfloat16}));
  EXPECT_EQ(c.ci.quick_iterations, 50);
  EXPECT_EQ(c.ci.fuzz_iterations, 500);
  EXPECT_EQ(c.ci.thorough_timeout, 3600);
  EXPECT_EQ(c.ci.parallel_jobs, 3);  // not the pack's business
}

TEST(PolicyPack, LlmKernelsChecksHalfPrecision) {
  Config c = project();
  ASSERT_TRUE(apply_policy_pack(c, "llm-kernels"));
  EXPECT_TRUE(c.policies.fail_on_regression);
  EXPECT_EQ(c.policies.warn_threshold, 0.9);
  EXPECT_EQ(c.policies.max_error_growth, 1.5);
  EXPECT_EQ(
      c.policies.artifact_thresholds,
      (std::map<std::string, double>{
          {"registers", 1.05}, {"shared_memory_bytes", 1.0}, {"spills", 1.0}, {"local_memory_bytes", 1.0}}));
  EXPECT_EQ(c.ci.quick_dtypes, (std::vector<tensor::DType>{tensor::DType::bfloat16, tensor::DType::float16}));
  EXPECT_EQ(c.ci.quick_iterations, 40);
  EXPECT_EQ(c.ci.fuzz_iterations, 300);
  EXPECT_EQ(c.ci.thorough_timeout, 300);  // left to the project
}

TEST(PolicyPack, OverridesKeyByKeyAndMergesArtifactThresholds) {
  Config c = project(
      "[policies]\nfail_on_regression = false\nwarn_threshold = 0.7\n"
      "[policies.artifact_thresholds]\nregisters = 1.5\nbarriers = 2\n");
  const fs::path file = write_pack("partial.toml",
                                   "[policies]\nwarn_threshold = 0.6\n"
                                   "[policies.artifact_thresholds]\nregisters = 1.2\n");
  ASSERT_TRUE(apply_policy_pack(c, file.string()));
  EXPECT_FALSE(c.policies.fail_on_regression);  // the pack does not set it
  EXPECT_EQ(c.policies.warn_threshold, 0.6);
  EXPECT_EQ(c.policies.max_error_growth, 2.0);
  EXPECT_EQ(c.policies.artifact_thresholds,
            (std::map<std::string, double>{{"registers", 1.2}, {"barriers", 2}}));
}

TEST(PolicyPack, DigestFollowsTheSettings) {
  Config c = project();
  const std::string before = c.digest;
  ASSERT_TRUE(apply_policy_pack_text(c, "[policies]\nwarn_threshold = 0.8\n", "same.toml"));
  EXPECT_EQ(c.digest, before) << "a pack that changes nothing keeps the digest";
  ASSERT_TRUE(apply_policy_pack(c, "strict"));
  EXPECT_NE(c.digest, before);
  EXPECT_EQ(c.digest, project("[policies]\nwarn_threshold = 0.5\nmax_error_growth = 1.25\n"
                              "[policies.artifact_thresholds]\nregisters = 1.0\nspills = 1.0\n"
                              "local_memory_bytes = 1.0\nshared_memory_bytes = 1.0\nstack_frame_bytes = 1.0\n"
                              "[ci]\nquick_dtypes = [\"float32\", \"float16\", \"bfloat16\"]\n"
                              "quick_iterations = 50\nfuzz_iterations = 500\nthorough_timeout = 3600\n")
                          .digest)
      << "applying strict gives the digest of a gpuemu.toml with the same settings";
}

struct Bad {
  std::string text;
  std::string message;  // the whole diagnostic, with "PACK" for the file's path
  friend void PrintTo(const Bad& bad, std::ostream* out) { *out << bad.text; }
};

class BadPack : public ::testing::TestWithParam<Bad> {};

TEST_P(BadPack, IsAConfigErrorAtTheLineWithAFixAndChangesNothing) {
  const fs::path file = write_pack("bad.toml", GetParam().text);
  Config c = project();
  const Config before = c;
  auto applied = apply_policy_pack(c, file.string());
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().kind, ErrorKind::config);
  std::string expected = GetParam().message;
  expected.replace(expected.find("PACK"), 4, file.string());
  EXPECT_EQ(applied.error().message, expected);
  EXPECT_EQ(c.digest, before.digest);
  EXPECT_EQ(c.policies.warn_threshold, before.policies.warn_threshold);
}

INSTANTIATE_TEST_SUITE_P(
    Config, BadPack,
    ::testing::Values(
        Bad{"[policies]\nwarn_threshold = 0.5\nfail_on_regresion = true\n",
            "PACK:3:1: error: unknown key 'fail_on_regresion' in [policies]\n"
            "fail_on_regresion = true\n"
            "^\n"
            "hint: did you mean 'fail_on_regression'?"},
        Bad{"[policies]\nwarn_threshold = 0.5\n\n[validation]\nseed = 1\n",
            "PACK:4:2: error: unknown key 'validation' in a policy pack\n"
            "[validation]\n"
            " ^\n"
            "hint: a policy pack sets only [policies] and [ci]; other settings belong in gpuemu.toml"},
        Bad{"[ci]\nquick_iterations = 3\n[policy]\nwarn_threshold = 0.5\n",
            "PACK:3:2: error: unknown key 'policy' in a policy pack\n"
            "[policy]\n"
            " ^\n"
            "hint: a policy pack sets only [policies] and [ci]; other settings belong in gpuemu.toml"},
        Bad{"[polices]\nwarn_threshold = 0.5\n",
            "PACK:1:2: error: unknown key 'polices' in a policy pack\n"
            "[polices]\n"
            " ^\n"
            "hint: did you mean 'policies'?"},
        Bad{"[policies]\nwarn_threshold = 0.5\n[ci]\nquick_dtypes = [\"float33\"]\n",
            "PACK:4:17: error: unknown dtype 'float33'\n"
            "quick_dtypes = [\"float33\"]\n"
            "                ^\n"
            "hint: did you mean 'float32'?"},
        Bad{"[policies]\nwarn_threshold = 1.5\n",
            "PACK:2:18: error: 'warn_threshold' must be between 0 and 1, got 1.5\n"
            "warn_threshold = 1.5\n"
            "                 ^\n"
            "hint: it is the fraction of the tolerance a passing case may use before a warning, e.g. 0.8"},
        Bad{"[ci]\nparallel_jobs = \"4\"\n",
            "PACK:2:17: error: wrong type for 'parallel_jobs': expected an integer, got a string\n"
            "parallel_jobs = \"4\"\n"
            "                ^"},
        Bad{"[policies]\nwarn_threshold = \n",
            "PACK:2:18: error: TOML syntax: Error while parsing key-value pair: expected value, saw "
            "'\\n'\nwarn_threshold = \n                 ^"},
        Bad{"# nothing but a comment\n",
            "PACK: error: the policy pack sets nothing\n"
            "hint: add a [policies] table (and optionally [ci]); see docs/policies.md"}));

TEST(PolicyPack, UnknownNameSuggestsTheClosestBundledPack) {
  Config c = project();
  auto applied = apply_policy_pack(c, "strct");
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().kind, ErrorKind::config);
  EXPECT_EQ(applied.error().message,
            "unknown policy pack 'strct'\nhint: did you mean 'strict'? bundled packs are 'default', "
            "'llm-kernels' or 'strict'; or give the path of a TOML file (docs/policies.md)");
}

TEST(PolicyPack, MissingFileNamesThePath) {
  Config c = project();
  auto applied = apply_policy_pack(c, "no/such/pack.toml");
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().kind, ErrorKind::config);
  EXPECT_EQ(applied.error().message,
            "no/such/pack.toml: error: cannot read the policy pack file 'no/such/pack.toml': No such file or "
            "directory; check the path\nhint: bundled packs are 'default', 'llm-kernels' or 'strict'; or "
            "give the path of a TOML file (docs/policies.md)");
}

TEST(PolicyPack, EmptyNameIsAnError) {
  Config c = project();
  auto applied = apply_policy_pack(c, "");
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().kind, ErrorKind::config);
  EXPECT_EQ(applied.error().message.rfind("the policy pack name is empty\n", 0), 0u)
      << applied.error().message;
}

}  // namespace
}  // namespace gpuemu::config
