// util/private_dir: every directory gpuemu creates is mode 0700 whatever the umask; an existing
// directory keeps its mode unless it is gpuemu's own; a file in the way is an error naming it.
#include "util/private_dir.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "../support/temp_dir.hpp"

namespace gpuemu::util {
namespace {

namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat info {};
  EXPECT_EQ(::stat(p.c_str(), &info), 0) << p;
  return info.st_mode & 0777;
}

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override { old_umask_ = ::umask(0022); }
  void TearDown() override { ::umask(old_umask_); }
  ::gpuemu::testing::TempDir temp_{"gpuemu-private-dir"};
  const fs::path root_ = temp_.path();
  mode_t old_umask_ = 0;
};

TEST_F(PrivateDirTest, CreatesEveryMissingLevelPrivateEvenUnderAnOddUmask) {
  ::umask(0277);  // would leave a plain mkdir unwritable to its owner
  const fs::path dir = root_ / "a" / "b" / "c";
  ASSERT_TRUE(make_private_dirs(dir, ExistingDir::keep_mode, "fix it"));
  for (const auto& p : {root_ / "a", root_ / "a" / "b", dir}) EXPECT_EQ(mode_of(p), 0700u) << p;
}

TEST_F(PrivateDirTest, ExistingDirectoryKeepsItsModeUnlessItIsOurs) {
  const fs::path dir = root_ / "shared";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_TRUE(make_private_dirs(dir, ExistingDir::keep_mode, "fix it"));
  EXPECT_EQ(mode_of(dir), 0755u);
  ASSERT_TRUE(make_private_dirs(dir, ExistingDir::make_private, "fix it"));
  EXPECT_EQ(mode_of(dir), 0700u);
}

TEST_F(PrivateDirTest, AFileInTheWayIsAnErrorThatNamesItAndTheFix) {
  const fs::path file = root_ / "file";
  std::ofstream(file) << "x";
  const auto below = make_private_dirs(file / "sub", ExistingDir::keep_mode, "point GPUEMU_HOME elsewhere");
  ASSERT_FALSE(below);
  EXPECT_EQ(below.error().kind, ErrorKind::io);
  EXPECT_EQ(below.error().message, "cannot create the directory " + (file / "sub").string() +
                                       ": Not a directory; point GPUEMU_HOME elsewhere");
  const auto itself = make_private_dirs(file, ExistingDir::make_private, "point GPUEMU_HOME elsewhere");
  ASSERT_FALSE(itself);
  EXPECT_EQ(itself.error().message, file.string() + " is not a directory; point GPUEMU_HOME elsewhere");
}

}  // namespace
}  // namespace gpuemu::util
