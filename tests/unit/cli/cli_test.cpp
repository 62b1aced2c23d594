// The CLI in process (cli::run): argument parsing, command dispatch and exit codes of commands
// that need no Python, with stdout and stderr captured and compared whole where they are short.
#include "cli/cli.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Runs `gpuemu ARGS...` in this process with GPUEMU_HOME in a fresh directory.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("GPUEMU_HOME", (root_ / "home").c_str(), 1); }
  void TearDown() override { ::unsetenv("GPUEMU_HOME"); }

  Outcome gpuemu(std::vector<std::string> args) {
    args.insert(args.begin(), "gpuemu");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    Outcome o;
    o.code = run(static_cast<int>(args.size()), argv.data());
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    o.out = out.str();
    o.err = err.str();
    return o;
  }

  static std::string read(const fs::path& file) {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  ::gpuemu::testing::TempDir temp_{"gpuemu-cli-test"};
  const fs::path root_ = temp_.path();
};

TEST_F(CliTest, VersionExitsZeroInTextAndJson) {
  const auto text = gpuemu({"version"});
  EXPECT_EQ(text.code, 0);
  EXPECT_EQ(text.out, std::string("gpuemu ") + GPUEMU_VERSION + "\n");
  EXPECT_EQ(text.err, "");
  const auto json = gpuemu({"--format", "json", "version"});
  EXPECT_EQ(json.code, 0);
  EXPECT_NE(json.out.find("\"version\""), std::string::npos) << json.out;
}

TEST_F(CliTest, AnUnknownCommandGetsASuggestionAndExitsTwo) {
  const auto o = gpuemu({"fuzzz"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err,
            "gpuemu: unknown command 'fuzzz' (did you mean 'fuzz'?); run 'gpuemu --help' for the list\n");
  // Options and their values before the command are skipped, not taken for it.
  const auto after_options = gpuemu({"--format", "json", "-q", "minimze"});
  EXPECT_EQ(after_options.code, 2);
  EXPECT_EQ(
      after_options.err,
      "gpuemu: unknown command 'minimze' (did you mean 'minimize'?); run 'gpuemu --help' for the list\n");
  const auto far = gpuemu({"xyzzy"});
  EXPECT_EQ(far.err, "gpuemu: unknown command 'xyzzy'; run 'gpuemu --help' for the list\n");
}

TEST_F(CliTest, AnUnexpectedFlagIsNamedWithTheNearestOneAndExitsTwo) {
  // CLI11 lists the flag's value before the flag; the hint used to look at the first word only.
  const auto o = gpuemu({"show", "5", "--opp", "relu"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err,
            "gpuemu: The following arguments were not expected: relu --opp (did you mean '--op'?)\n"
            "Run 'gpuemu show --help' for usage.\n");
  const auto alone = gpuemu({"show", "5", "--opp"});
  EXPECT_EQ(alone.code, 2);
  EXPECT_NE(alone.err.find("--opp (did you mean '--op'?)"), std::string::npos) << alone.err;
}

TEST_F(CliTest, AMissingArgumentIsAParseErrorNamingIt) {
  const auto o = gpuemu({"show"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("seed"), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");
}

TEST_F(CliTest, ABadSeedNamesItAndTheRangeAndExitsTwoBeforeTouchingTheStore) {
  const auto o = gpuemu({"show", "12x"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err,
            "gpuemu: error: seed '12x' is not a seed: give an unsigned 64-bit decimal number "
            "(0 to 18446744073709551615)\n");
  const auto too_big = gpuemu({"show", "18446744073709551616"});
  EXPECT_EQ(too_big.code, 2);
  EXPECT_FALSE(fs::exists(root_ / "home")) << "a rejected seed must not create the store";
}

TEST_F(CliTest, HelpExitsZeroAndListsTheCommands) {
  const auto o = gpuemu({"--help"});
  EXPECT_EQ(o.code, 0);
  for (const char* command : {"init", "test", "fuzz", "minimize", "version"}) {
    EXPECT_NE(o.out.find(command), std::string::npos) << command;
  }
}

TEST_F(CliTest, InitWritesAProjectThenRefusesToOverwriteItUnlessForced) {
  const fs::path dir = root_ / "proj";
  const auto first = gpuemu({"init", dir.string()});
  ASSERT_EQ(first.code, 0) << first.err;
  ASSERT_TRUE(fs::exists(dir / "gpuemu.toml"));
  std::ofstream(dir / "gpuemu.toml") << "# mine\n";

  const auto again = gpuemu({"init", dir.string()});
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("gpuemu init would overwrite"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find((dir / "gpuemu.toml").string()), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(read(dir / "gpuemu.toml"), "# mine\n") << "a refusal writes nothing";

  const auto forced = gpuemu({"init", dir.string(), "--force"});
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(read(dir / "gpuemu.toml"), "# mine\n");
  EXPECT_NE(forced.out.find("gpuemu.toml (overwritten)"), std::string::npos) << forced.out;
}

TEST_F(CliTest, InitWithAnUnknownTemplateSuggestsOneAndWritesNothing) {
  const fs::path dir = root_ / "proj";
  const auto o = gpuemu({"init", dir.string(), "--template", "matmull"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("gpuemu: error: unknown template 'matmull' (did you mean 'matmul'?); templates: "),
            std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace gpuemu::cli
