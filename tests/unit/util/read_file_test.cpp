// Tests for read_file.cpp, the one way gpuemu reads a file: devices, FIFOs, symlinks and huge
// sparse files are refused before any byte is read, without blocking, with the path and the limit.
#include "util/read_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../support/temp_dir.hpp"

namespace gpuemu::util {
namespace {

namespace fs = std::filesystem;

class ReadFileTest : public ::testing::Test {
 protected:
  ::gpuemu::testing::TempDir temp_{"gpuemu-read-file"};
  const fs::path dir_ = temp_.path();
};

TEST_F(ReadFileTest, ReadsARegularFile) {
  std::ofstream(dir_ / "a.toml") << "x = 1\n";
  const auto text = read_text_file(dir_ / "a.toml", "config");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "x = 1\n");
}

TEST_F(ReadFileTest, RefusesACharacterDeviceWithoutReadingIt) {
  const auto text = read_text_file("/dev/zero", "the project file");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().kind, ErrorKind::usage);
  EXPECT_EQ(text.error().message,
            "cannot read the project file '/dev/zero': it is a character device, not a regular file; check "
            "the path");
}

TEST_F(ReadFileTest, ASymlinkIsJudgedByItsTargetOrRefusedWhenItComesFromOutside) {
  fs::create_symlink("/dev/zero", dir_ / "zero.toml");
  const auto followed = read_text_file(dir_ / "zero.toml", "config");
  ASSERT_FALSE(followed);
  EXPECT_NE(followed.error().message.find("it is a character device"), std::string::npos);

  std::ofstream(dir_ / "real.toml") << "x = 1\n";
  fs::create_symlink(dir_ / "real.toml", dir_ / "link.toml");
  EXPECT_TRUE(read_text_file(dir_ / "link.toml", "config"));
  const auto refused = read_text_file(dir_ / "link.toml", "config", {.symlinks = Symlinks::refuse});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "cannot read config '" + (dir_ / "link.toml").string() +
                                         "': it is a symbolic link, which is not followed here; give the "
                                         "path of the file itself");
}

TEST_F(ReadFileTest, RefusesAHugeSparseFileFromItsSizeAlone) {
  const fs::path big = dir_ / "big.toml";
  std::ofstream(big).close();
  fs::resize_file(big, 1ull << 30);  // 1 GiB of holes: reading it would take a second and 1 GiB
  const auto start = std::chrono::steady_clock::now();
  const auto text = read_text_file(big, "config", {.max_bytes = 4u << 20, .kind = ErrorKind::config});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().kind, ErrorKind::config);
  EXPECT_EQ(text.error().message, "cannot read config '" + big.string() +
                                      "': it is 1073741824 bytes, more than the limit of 4194304 bytes; "
                                      "check the path");
}

TEST_F(ReadFileTest, RefusesAFifoWithoutBlockingInOpen) {
  const fs::path fifo = dir_ / "fifo.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens it: a blocking open() would hang here (and the test time out).
  const auto text = read_text_file(fifo, "config");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message,
            "cannot read config '" + fifo.string() + "': it is a FIFO, not a regular file; check the path");
  const auto present = read_text_file_if_present(fifo, "config");
  EXPECT_FALSE(present);
}

TEST_F(ReadFileTest, RefusesADirectory) {
  const auto text = read_text_file(dir_, "config");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("it is a directory, not a regular file"), std::string::npos);
}

TEST_F(ReadFileTest, CapsTheReadOfAFileThatReportsSizeZero) {
  // /proc files say st_size 0 but have content: the cap, not the size, bounds the read.
  const auto text = read_text_file("/proc/self/status", "status", {.max_bytes = 16});
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message,
            "cannot read status '/proc/self/status': it grew past the limit of 16 bytes while being read");
}

TEST_F(ReadFileTest, AMissingFileIsAnErrorOrNoValue) {
  const auto missing = read_text_file(dir_ / "none.toml", "config");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "cannot read config '" + (dir_ / "none.toml").string() +
                                         "': No such file or directory; check the path");
  const auto present = read_text_file_if_present(dir_ / "none.toml", "config");
  ASSERT_TRUE(present);
  EXPECT_FALSE(*present);
}

TEST_F(ReadFileTest, OpenGivesTheModeOfTheFileItReads) {
  std::ofstream(dir_ / "k") << "key";
  ASSERT_EQ(::chmod((dir_ / "k").c_str(), 0640), 0);
  auto file = RegularFile::open(dir_ / "k", "key file");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->status().st_mode & 0777, 0640u);
  const auto text = file->read_all();
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "key");
}

}  // namespace
}  // namespace gpuemu::util
