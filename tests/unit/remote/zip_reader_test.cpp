// Tests for zip_reader.cpp against archives written by Python's zipfile (stored and deflated),
// plus damaged archives (a flipped data byte, a cut-off file, an entry over the size limit) and
// crafted bombs: many directory entries sharing one deflate stream, reordered entries, a big sum.
#include "remote/zip_reader.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <chrono>
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

constexpr ZipLimits kLimits{1 << 20, 4 << 20};

// Every entry of `zip`, extracted: what the tests compare.
Expected<std::vector<std::pair<std::string, std::string>>> read_all(std::string_view zip,
                                                                    std::string_view what,
                                                                    const ZipLimits& limits) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ZipEntry& entry : TRY(list_zip(zip, what, limits))) {
    out.emplace_back(entry.name, TRY(extract_zip_entry(zip, entry, what)));
  }
  return out;
}

TEST(ZipReader, ReadsStoredAndDeflatedEntries) {
  TempDir dir;
  for (const char* compression : {"ZIP_STORED", "ZIP_DEFLATED"}) {
    const std::string zip = make_zip(dir, compression);
    const auto entries = read_all(zip, "artifact", kLimits);
    ASSERT_TRUE(entries) << entries.error().message;
    ASSERT_EQ(entries->size(), 3u) << compression;  // the directory entry is skipped
    EXPECT_EQ((*entries)[0].first, "dir/main.json");
    EXPECT_EQ((*entries)[0].second.size(), 10032u);
    EXPECT_TRUE((*entries)[0].second.starts_with("{\"schema_version\": 1"));
    EXPECT_EQ((*entries)[1].second, "hello");
    EXPECT_EQ((*entries)[2].second, "");
  }
}

TEST(ZipReader, RefusesDamagedArchives) {
  TempDir dir;
  std::string zip = make_zip(dir, "ZIP_DEFLATED");
  std::string flipped = zip;
  flipped[80] = static_cast<char>(flipped[80] ^ 0x55);  // inside the first entry's deflate stream
  const auto bad = read_all(flipped, "artifact 7", kLimits);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("artifact 7"), std::string::npos) << bad.error().message;

  const auto cut = list_zip(zip.substr(0, zip.size() / 2), "artifact 7", kLimits);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().message,
            "artifact 7 is not a readable zip archive: no end-of-central-directory record");

  const auto big = list_zip(zip, "artifact 7", {1000, 1 << 20});
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message,
            "artifact 7: entry 'dir/main.json' is 10032 bytes, over the limit of 1000 bytes");

  EXPECT_FALSE(list_zip("<html>not a zip</html> padding padding", "x", kLimits));
}

TEST(ZipReader, InflatesOnlyTheEntryAskedFor) {
  TempDir dir;
  std::string zip = make_zip(dir, "ZIP_DEFLATED");
  zip[80] = static_cast<char>(zip[80] ^ 0x55);  // damages dir/main.json's deflate stream only
  const auto entries = list_zip(zip, "artifact", kLimits);
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].size, 10032u);
  EXPECT_FALSE(extract_zip_entry(zip, (*entries)[0], "artifact"));
  const auto notes = extract_zip_entry(zip, (*entries)[1], "artifact");
  ASSERT_TRUE(notes) << notes.error().message;
  EXPECT_EQ(*notes, "hello");
}

// A hand-made archive: one local entry per `locals` item, then a central directory whose entries
// point at the local headers listed in `directory` (indexes into `locals`), in that order.
struct Local {
  std::string name;
  std::string deflated;
  std::uint32_t size = 0;
  std::uint32_t crc = 0;
};

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

Local deflated_local(std::string name, const std::string& content) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, content.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
  stream.avail_in = static_cast<uInt>(content.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  const auto crc =
      crc32(0L, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size()));
  return {std::move(name), std::move(out), static_cast<std::uint32_t>(content.size()),
          static_cast<std::uint32_t>(crc)};
}

std::string craft_zip(const std::vector<Local>& locals, const std::vector<std::size_t>& directory,
                      const std::string& name_suffix = "") {
  std::string zip;
  std::vector<std::uint32_t> offsets;
  for (const Local& l : locals) {
    offsets.push_back(static_cast<std::uint32_t>(zip.size()));
    put32(zip, 0x04034b50);
    put16(zip, 20), put16(zip, 0), put16(zip, 8), put16(zip, 0), put16(zip, 0);
    put32(zip, l.crc), put32(zip, static_cast<std::uint32_t>(l.deflated.size())), put32(zip, l.size);
    put16(zip, static_cast<std::uint32_t>(l.name.size())), put16(zip, 0);
    zip += l.name + l.deflated;
  }
  const auto dir_offset = static_cast<std::uint32_t>(zip.size());
  std::size_t n = 0;
  for (const std::size_t i : directory) {
    const Local& l = locals[i];
    const std::string name = name_suffix.empty() ? l.name : l.name + std::to_string(n++) + name_suffix;
    put32(zip, 0x02014b50);
    put16(zip, 20), put16(zip, 20), put16(zip, 0), put16(zip, 8), put16(zip, 0), put16(zip, 0);
    put32(zip, l.crc), put32(zip, static_cast<std::uint32_t>(l.deflated.size())), put32(zip, l.size);
    put16(zip, static_cast<std::uint32_t>(name.size())), put16(zip, 0), put16(zip, 0), put16(zip, 0),
        put16(zip, 0);
    put32(zip, 0), put32(zip, offsets[i]);
    zip += name;
  }
  const auto dir_size = static_cast<std::uint32_t>(zip.size() - dir_offset);
  put32(zip, 0x06054b50);
  put16(zip, 0), put16(zip, 0);
  put16(zip, static_cast<std::uint32_t>(directory.size())),
      put16(zip, static_cast<std::uint32_t>(directory.size()));
  put32(zip, dir_size), put32(zip, dir_offset), put16(zip, 0);
  return zip;
}

long max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The archive: 2,000 central entries that all point at one 64 MiB deflated entry (about
// 177 KB on disk, 125 GiB if every entry were inflated). Refused from the directory alone.
TEST(ZipReader, RefusesManyEntriesSharingOneDeflateStreamQuicklyInBoundedMemory) {
  const Local shared = deflated_local("main.json", std::string(64u << 20, ' '));
  const std::string zip = craft_zip({shared}, std::vector<std::size_t>(2000, 0), ".json");
  ASSERT_LT(zip.size(), 400'000u);
  const long rss_before = max_rss_kib();
  const auto start = std::chrono::steady_clock::now();
  // Limits as gh-artifact:// uses them by default: 64 MiB an entry, 256 MiB in all.
  const auto entries = list_zip(zip, "gh-artifact://baselines", {64u << 20, 256u << 20});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(entries);
  EXPECT_EQ(entries.error().message,
            "gh-artifact://baselines is not a readable zip archive: entry 'main.json1.json' overlaps entry "
            "'main.json0.json' or comes before it in the file; a zip written by an archiver never does "
            "this, so it is refused");
  EXPECT_LT(took, std::chrono::milliseconds(500));
  EXPECT_LT(max_rss_kib() - rss_before, 16 * 1024) << "KiB of new peak RSS";
}

TEST(ZipReader, RefusesEntriesOutOfFileOrder) {
  const std::string zip = craft_zip({deflated_local("a.json", "{}"), deflated_local("b.json", "[]")}, {1, 0});
  const auto entries = list_zip(zip, "artifact", kLimits);
  ASSERT_FALSE(entries);
  EXPECT_NE(entries.error().message.find("entry 'a.json' overlaps entry 'b.json' or comes before it"),
            std::string::npos)
      << entries.error().message;
  const std::string in_order =
      craft_zip({deflated_local("a.json", "{}"), deflated_local("b.json", "[]")}, {0, 1});
  const auto fine = read_all(in_order, "artifact", kLimits);
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ((*fine)[1].second, "[]");
}

TEST(ZipReader, RefusesEntriesWhoseSumIsOverTheTotalLimit) {
  const std::string content(600'000, 'x');
  const std::string zip =
      craft_zip({deflated_local("a.json", content), deflated_local("b.json", content)}, {0, 1});
  EXPECT_TRUE(list_zip(zip, "artifact", {1 << 20, 2 << 20}));
  const auto entries = list_zip(zip, "artifact", {1 << 20, 1 << 20});
  ASSERT_FALSE(entries);
  EXPECT_EQ(entries.error().message,
            "artifact: its entries hold more than 1048576 bytes together, over the limit for one archive");
}

}  // namespace
}  // namespace gpuemu::remote
