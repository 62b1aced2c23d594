// The three-file precedence (project over user over daemon), default source locations from
// HOME and GPUEMU_HOME, and the config digest's independence from the checkout location.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../support/temp_dir.hpp"
#include "config/config_json.hpp"
#include "config/loader.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using namespace fixtures;

namespace fs = std::filesystem;

ConfigSources merge_sources() {
  return ConfigSources{kFixtures / "merge_project.toml",
                       kFixtures / "home" / ".config" / "gpuemu" / "config.toml",
                       kFixtures / "gpuemu_home" / "daemon.toml"};
}

TEST(ConfigMerge, HigherFilesWinKeyByKey) {
  auto c = load_config(merge_sources());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_DOUBLE_EQ(c->validation.timeout, 3.0);         // project over user (30) and daemon (99)
  EXPECT_EQ(c->validation.python, "/usr/bin/python3");  // user only
  EXPECT_EQ(c->validation.test_cases, 9);               // user only
  EXPECT_EQ(c->validation.worker_max_cases, 77);        // daemon only
  EXPECT_EQ(c->validation.fuzz_iterations, 11);         // daemon only
  EXPECT_EQ(c->ci.parallel_jobs, 8);                    // project over user
  EXPECT_EQ(c->ci.quick_iterations, 7);                 // user
  EXPECT_DOUBLE_EQ(c->policies.warn_threshold, 0.25);   // daemon
}

TEST(ConfigMerge, ArraysOfTablesComeWholeFromTheHighestFileDefiningThem) {
  auto c = load_config(merge_sources());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->ops.size(), 1u);
  EXPECT_EQ(c->ops[0].name, "user_op_never_used");
  ASSERT_EQ(c->kernels.size(), 1u);
  // Paths in daemon.toml are relative to daemon.toml, not to the project.
  EXPECT_EQ(c->kernels[0].source, kFixtures / "gpuemu_home" / "daemon_kernel.ptx");

  // The project file defines [[ops]], so the user's ops are dropped entirely.
  ConfigSources with_ops = merge_sources();
  with_ops.project_file = kFixtures / "project" / "gpuemu.toml";
  auto p = load_config(with_ops);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->ops.size(), 4u);
  EXPECT_EQ(p->find_op("user_op_never_used"), nullptr);
  EXPECT_EQ(p->kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(p->validation.timeout, 12.5);
  EXPECT_EQ(p->validation.test_cases, 6);
  EXPECT_EQ(p->validation.worker_max_cases, 50);
}

TEST(ConfigMerge, MissingLowerFilesAreSkipped) {
  ConfigSources sources = merge_sources();
  sources.user_file = kFixtures / "no-such-dir" / "config.toml";
  sources.daemon_file = kFixtures / "no-such-dir" / "daemon.toml";
  auto c = load_config(sources);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->validation.python, "python3");
  EXPECT_TRUE(c->kernels.empty());
}

TEST(ConfigMerge, ErrorsInLowerFilesNameThatFile) {
  const gpuemu::testing::TempDir temp("gpuemu-config-merge-error");
  const fs::path& dir = temp.path();
  const fs::path user = dir / "config.toml";
  std::ofstream(user) << "[ci]\nparalel_jobs = 2\n";
  ConfigSources sources = merge_sources();
  sources.user_file = user;
  auto c = load_config(sources);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, user.string() +
                                   ":2:1: error: unknown key 'paralel_jobs' in [ci]\n"
                                   "paralel_jobs = 2\n"
                                   "^\n"
                                   "hint: did you mean 'parallel_jobs'?");
}

class DefaultSources : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HOME", "GPUEMU_HOME"}) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value != nullptr ? std::optional<std::string>(value) : std::nullopt);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(DefaultSources, HonourHomeAndGpuemuHome) {
  setenv("HOME", (kFixtures / "home").c_str(), 1);
  setenv("GPUEMU_HOME", (kFixtures / "gpuemu_home").c_str(), 1);
  const ConfigSources s = default_sources(kFixtures / "merge_project.toml");
  EXPECT_EQ(s.project_file, kFixtures / "merge_project.toml");
  EXPECT_EQ(s.user_file, kFixtures / "home" / ".config" / "gpuemu" / "config.toml");
  EXPECT_EQ(s.daemon_file, kFixtures / "gpuemu_home" / "daemon.toml");
  auto c = load_config(s);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->validation.worker_max_cases, 77);
  EXPECT_EQ(c->validation.test_cases, 9);
}

TEST_F(DefaultSources, GpuemuHomeDefaultsToDotGpuemu) {
  setenv("HOME", "/home/someone", 1);
  unsetenv("GPUEMU_HOME");
  const ConfigSources s = default_sources("gpuemu.toml");
  EXPECT_EQ(s.daemon_file, fs::path("/home/someone/.gpuemu/daemon.toml"));
  EXPECT_EQ(s.user_file, fs::path("/home/someone/.config/gpuemu/config.toml"));
}

// Copies the fixture project to `dir` and loads it from there.
Config load_copy(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(kFixtures / "project", dir, fs::copy_options::recursive);
  auto c = load_config(ConfigSources{dir / "gpuemu.toml", std::nullopt, std::nullopt});
  if (!c) ADD_FAILURE() << c.error().message;
  return c ? *c : Config{};
}

TEST(ConfigDigest, DoesNotDependOnWhereTheProjectLives) {
  const gpuemu::testing::TempDir tmp("gpuemu-digest");
  const Config a = load_copy(tmp / "a");
  const Config b = load_copy(tmp.path() / "b" / "nested");
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.digest, config_digest(a));
  const nlohmann::json j = to_json(a);
  EXPECT_EQ(j["ops"][0]["reference"]["path"], "scripts/matmul_ref.py");
  EXPECT_EQ(j["validation"]["python_path"][0], "pylib");
  EXPECT_EQ(j["validation"]["seed"], "18446744073709551615");
  EXPECT_EQ(j["kernels"][0]["source"], "kernels/matmul.ptx");
}

TEST(ConfigDigest, ChangesWithSettingsButNotWithComments) {
  const std::string base = "[project]\nname = \"d\"\n[validation]\nseed = 7\n";
  auto a = load_config_text(base, "gpuemu.toml");
  auto commented = load_config_text("# a comment\n" + base + "\n# another\n", "gpuemu.toml");
  auto other_seed = load_config_text("[project]\nname = \"d\"\n[validation]\nseed = 8\n", "gpuemu.toml");
  ASSERT_TRUE(a && commented && other_seed);
  EXPECT_EQ(a->digest, commented->digest);
  EXPECT_NE(a->digest, other_seed->digest);
}

}  // namespace
}  // namespace gpuemu::config
