// The config loader reads through util's one file reader (issue 20): /dev/zero, a FIFO, a huge
// file and a symlink from a daemon request are config errors, and a file not named *.toml is
// never quoted back in a diagnostic.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/temp_dir.hpp"
#include "config/loader.hpp"

namespace gpuemu::config {
namespace {

namespace fs = std::filesystem;

class ConfigBoundedRead : public ::testing::Test {
 protected:
  ::gpuemu::testing::TempDir temp_{"gpuemu-config-read"};
  const fs::path dir_ = temp_.path();
};

TEST_F(ConfigBoundedRead, DevZeroIsAConfigErrorNotAnEndlessRead) {
  const auto c = load_config(ConfigSources{"/dev/zero", std::nullopt, std::nullopt});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::config);
  EXPECT_EQ(
      c.error().message,
      "/dev/zero: error: cannot read the project file '/dev/zero': it is a character device, not a regular "
      "file; check the path\nhint: pass --config FILE with the path of a gpuemu.toml");
}

TEST_F(ConfigBoundedRead, AFifoProjectOrDaemonFileIsRefusedWithoutBlocking) {
  const fs::path fifo = dir_ / "gpuemu.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto project = load_config(ConfigSources{fifo, std::nullopt, std::nullopt});
  ASSERT_FALSE(project);
  EXPECT_NE(project.error().message.find("it is a FIFO, not a regular file"), std::string::npos)
      << project.error().message;

  std::ofstream(dir_ / "real.toml") << "[project]\nname = \"p\"\n";
  const auto daemon = load_config(ConfigSources{dir_ / "real.toml", std::nullopt, fifo});
  ASSERT_FALSE(daemon);
  EXPECT_EQ(daemon.error().message, fifo.string() + ": error: cannot read the daemon file '" + fifo.string() +
                                        "': it is a FIFO, not a regular file; check the path");
}

TEST_F(ConfigBoundedRead, AFileOverTheLimitIsRefusedFromItsSize) {
  const fs::path big = dir_ / "gpuemu.toml";
  std::ofstream(big).close();
  fs::resize_file(big, 1ull << 30);
  const auto c = load_config(ConfigSources{big, std::nullopt, std::nullopt});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("it is 1073741824 bytes, more than the limit of 4194304 bytes"),
            std::string::npos)
      << c.error().message;
}

TEST_F(ConfigBoundedRead, APathFromARequestDoesNotFollowASymlink) {
  std::ofstream(dir_ / "real.toml") << "[project]\nname = \"p\"\n";
  fs::create_symlink(dir_ / "real.toml", dir_ / "gpuemu.toml");
  ConfigSources sources{dir_ / "gpuemu.toml", std::nullopt, std::nullopt};
  EXPECT_TRUE(load_config(sources));
  sources.project_symlinks = util::Symlinks::refuse;
  const auto c = load_config(sources);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("it is a symbolic link, which is not followed here"), std::string::npos)
      << c.error().message;
}

TEST_F(ConfigBoundedRead, AFileNotNamedTomlIsNeverQuoted) {
  const fs::path secret = dir_ / "secret.txt";
  std::ofstream(secret) << "password: hunter2\n";
  const auto c = load_config(ConfigSources{secret, std::nullopt, std::nullopt});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message.find("hunter2"), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().message.find("password"), std::string::npos) << c.error().message;
  EXPECT_TRUE(c.error().message.starts_with(secret.string() + ":1:")) << c.error().message;
  EXPECT_NE(c.error().message.find("error: not a TOML file (a syntax error here)"), std::string::npos)
      << c.error().message;

  // Valid TOML with a wrong key: still no quoted line.
  const fs::path other = dir_ / "notes.cfg";
  std::ofstream(other) << "token = \"hunter2\"\n";
  const auto d = load_config(ConfigSources{other, std::nullopt, std::nullopt});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message.find("hunter2"), std::string::npos) << d.error().message;
}

}  // namespace
}  // namespace gpuemu::config
