// Tests for zip_reader.cpp against archives written by Python's zipfile (stored and deflated),
// plus damaged archives: a flipped data byte, a cut-off file, an entry over the size limit.
#include "remote/zip_reader.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_servers.hpp"

namespace gpuemu::remote {
namespace {

using testing::TempDir;

std::string make_zip(const TempDir& dir, const std::string& compression) {
  const auto path = dir.path() / ("a-" + compression + ".zip");
  const std::string script =
      "import sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], 'w', getattr(zipfile, sys.argv[2])) as z:\n"
      "    z.writestr('dir/', '')\n"
      "    z.writestr('dir/main.json', '{\"schema_version\": 1, \"pad\": \"' + 'ab' * 5000 + '\"}')\n"
      "    z.writestr('notes.txt', 'hello')\n"
      "    z.writestr('empty.json', '')\n";
  const auto py = dir.path() / "mk.py";
  std::ofstream(py) << script;
  const std::string command = "python3 " + py.string() + " " + path.string() + " " + compression;
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(ZipReader, ReadsStoredAndDeflatedEntries) {
  TempDir dir;
  for (const char* compression : {"ZIP_STORED", "ZIP_DEFLATED"}) {
    const std::string zip = make_zip(dir, compression);
    const auto entries = read_zip(zip, "artifact", 1 << 20);
    ASSERT_TRUE(entries) << entries.error().message;
    ASSERT_EQ(entries->size(), 3u) << compression;  // the directory entry is skipped
    EXPECT_EQ((*entries)[0].name, "dir/main.json");
    EXPECT_EQ((*entries)[0].data.size(), 10032u);
    EXPECT_TRUE((*entries)[0].data.starts_with("{\"schema_version\": 1"));
    EXPECT_EQ((*entries)[1].data, "hello");
    EXPECT_EQ((*entries)[2].data, "");
  }
}

TEST(ZipReader, RefusesDamagedArchives) {
  TempDir dir;
  std::string zip = make_zip(dir, "ZIP_DEFLATED");
  std::string flipped = zip;
  flipped[80] = static_cast<char>(flipped[80] ^ 0x55);  // inside the first entry's deflate stream
  const auto bad = read_zip(flipped, "artifact 7", 1 << 20);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("artifact 7"), std::string::npos) << bad.error().message;

  const auto cut = read_zip(zip.substr(0, zip.size() / 2), "artifact 7", 1 << 20);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().message,
            "artifact 7 is not a readable zip archive: no end-of-central-directory record");

  const auto big = read_zip(zip, "artifact 7", 1000);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message,
            "artifact 7: entry 'dir/main.json' is 10032 bytes, over the limit of 1000 bytes");

  EXPECT_FALSE(read_zip("<html>not a zip</html> padding padding", "x", 1000));
}

}  // namespace
}  // namespace gpuemu::remote
