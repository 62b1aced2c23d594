// Tests for shared-memory segments (wire/segment.hpp) and tensor entries that name them
// (decode_tensor_entries with a TensorSource): tensors are copies of the bytes they name, borrow keeps
// the file, lend hands it back, and every file that is not one of ours is refused naming it.
#include "wire/segment.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "wire/frames.hpp"

namespace gpuemu::wire {
namespace {

using nlohmann::json;

// A segment file holding `values` as float32, removed at the end of the test if still there.
struct SegmentFile {
  std::string path;
  explicit SegmentFile(std::vector<float> values, mode_t mode = 0600, std::string name = "") {
    path = std::string(kSegmentDir) +
           (name.empty() ? fmt::format("{}test-{}-{}", kSegmentPrefix, ::getpid(), counter()++) : name);
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, mode);
    EXPECT_GE(fd, 0) << path;
    ::fchmod(fd, mode);
    EXPECT_EQ(::write(fd, values.data(), values.size() * 4), static_cast<ssize_t>(values.size() * 4));
    ::close(fd);
  }
  ~SegmentFile() { ::unlink(path.c_str()); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

json entry_in(const std::string& segment, std::uint64_t offset, std::uint64_t nbytes) {
  return {{"name", "x"},      {"dtype", "float32"}, {"shape", {2}},      {"strides", {1}},
          {"offset", offset}, {"nbytes", nbytes},   {"segment", segment}};
}

TEST(Segment, BorrowedEntryIsACopyOfTheBytesItNamesAndKeepsTheFileName) {
  SegmentFile file({1.0f, 2.0f, 3.0f});
  const json header = {{"tensors", json::array({entry_in(file.path, 4, 8)})}};
  auto tensors =
      decode_tensor_entries(header, TensorSource{{}, nullptr, SegmentUse::borrow}, "the client", "tensor");
  ASSERT_TRUE(tensors) << tensors.error().message;
  const auto& x = tensors->at("x");
  EXPECT_EQ(x.to_doubles(), (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(x.data.segment(), file.path);  // passed on to a worker by name
  EXPECT_EQ(x.data.segment_offset(), 4u);
  EXPECT_TRUE(std::filesystem::exists(file.path));  // borrowed: the client's file stays
  // The client refills or shrinks its file: the tensor keeps the bytes it had (a copy, never a
  // mapping the client could fault).
  const int fd = ::open(file.path.c_str(), O_WRONLY);
  const float nine = 9.0f;
  ASSERT_EQ(::pwrite(fd, &nine, 4, 4), 4);
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  ::close(fd);
  EXPECT_EQ(x.to_doubles(), (std::vector<double>{2.0, 3.0}));
}

TEST(Segment, LentSegmentIsReleasedOnceCopiedAndNotNamedOn) {
  SegmentFile file({4.0f, 5.0f});
  const json header = {{"tensors", json::array({entry_in(file.path, 0, 8)})}};
  auto releases = std::make_shared<SegmentReleases>();
  auto tensors = decode_tensor_entries(header, TensorSource{{}, nullptr, SegmentUse::lend, releases},
                                       "worker", "output");
  ASSERT_TRUE(tensors) << tensors.error().message;
  EXPECT_TRUE(std::filesystem::exists(file.path));  // lent, not given: the worker refills it later
  EXPECT_EQ(releases->take(), std::vector<std::string>{file.path});
  EXPECT_TRUE(tensors->at("x").data.segment().empty());
  EXPECT_EQ(tensors->at("x").to_doubles(), (std::vector<double>{4.0, 5.0}));
}

TEST(Segment, LentSegmentIsReleasedWhenDecodingFails) {
  SegmentFile file({4.0f, 5.0f});
  json bad = entry_in(file.path, 0, 8);
  bad["name"] = "y";
  bad["shape"] = {3};  // 12 bytes of view in 8
  const json header = {{"tensors", json::array({entry_in(file.path, 0, 8), bad})}};
  auto releases = std::make_shared<SegmentReleases>();
  auto tensors = decode_tensor_entries(header, TensorSource{{}, nullptr, SegmentUse::lend, releases},
                                       "worker", "output");
  EXPECT_FALSE(tensors);
  EXPECT_EQ(releases->take(), std::vector<std::string>{file.path});
}

TEST(Segment, ReadsOnlyTheNamedBytesOfASparseFile) {
  // A 16-byte tensor at the end of a 1 GiB sparse file: only 16 bytes are read, nothing is mapped.
  SegmentFile file({});
  const int fd = ::open(file.path.c_str(), O_WRONLY);
  ASSERT_EQ(::ftruncate(fd, std::int64_t{1} << 30), 0);
  ::close(fd);
  auto seg = OpenSegment::open(file.path, SegmentUse::borrow, "client");
  ASSERT_TRUE(seg) << seg.error().message;
  EXPECT_EQ(seg->size(), std::uint64_t{1} << 30);
  auto bytes = seg->read((std::uint64_t{1} << 30) - 16, 16, "tensor");
  ASSERT_TRUE(bytes) << bytes.error().message;
  EXPECT_EQ((*bytes)[15], std::byte{0});
}

TEST(Segment, AFileThatShrankIsAnErrorNotASignal) {
  SegmentFile file(std::vector<float>(1024, 1.0f));
  auto seg = OpenSegment::open(file.path, SegmentUse::borrow, "client");
  ASSERT_TRUE(seg) << seg.error().message;
  ASSERT_EQ(::truncate(file.path.c_str(), 100), 0);
  auto bytes = seg->read(0, 4096, "tensor 'x'");
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.error().message.find("shrank to 100 bytes while it was read"), std::string::npos)
      << bytes.error().message;
}

TEST(Segment, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = fmt::format("{}{}test-fifo-{}", kSegmentDir, kSegmentPrefix, ::getpid());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto seg = OpenSegment::open(path, SegmentUse::borrow, "client");  // blocked for ever before
  ::unlink(path.c_str());
  ASSERT_FALSE(seg);
  EXPECT_NE(seg.error().message.find("not a regular file"), std::string::npos) << seg.error().message;
}

TEST(Segment, RemovesTheSegmentsOfOneProcess) {
  const std::string mine = std::string(kSegmentDir) + kSegmentPrefix + "999999999-0-test";
  const std::string other = std::string(kSegmentDir) + kSegmentPrefix + "9999999990-0-test";
  for (const auto& path : {mine, other}) ::close(::open(path.c_str(), O_CREAT | O_WRONLY, 0600));
  EXPECT_EQ(remove_segments_of(999999999), 1);
  EXPECT_FALSE(std::filesystem::exists(mine));
  EXPECT_TRUE(std::filesystem::exists(other));
  ::unlink(other.c_str());
}

TEST(Segment, PayloadEntriesBecomeViewsWhenAKeeperHoldsThePayload) {
  auto payload = std::make_shared<std::vector<std::byte>>(8);
  const float v[2] = {7.0f, 8.0f};
  std::memcpy(payload->data(), v, 8);
  json e = entry_in("", 0, 8);
  e.erase("segment");
  auto tensors = decode_tensor_entries({{"tensors", json::array({e})}},
                                       TensorSource{*payload, payload, SegmentUse::refuse}, "m", "tensor");
  ASSERT_TRUE(tensors) << tensors.error().message;
  EXPECT_EQ(std::as_const(*tensors).at("x").data.data(), payload->data());  // const: reading never copies
  EXPECT_EQ(tensors->at("x").to_doubles(), (std::vector<double>{7.0, 8.0}));
}

std::string refusal(const json& entry, SegmentUse use) {
  auto tensors = decode_tensor_entries({{"tensors", json::array({entry})}}, TensorSource{{}, nullptr, use},
                                       "the client", "tensor");
  EXPECT_FALSE(tensors);
  return tensors ? "" : tensors.error().message;
}

TEST(Segment, RefusesWhatIsNotOneOfOurs) {
  SegmentFile file({1.0f, 2.0f});
  EXPECT_NE(refusal(entry_in(file.path, 0, 8), SegmentUse::refuse).find("where none is allowed"),
            std::string::npos);
  EXPECT_NE(refusal(entry_in("/etc/passwd", 0, 8), SegmentUse::borrow).find("not a file /dev/shm/gpuemu-*"),
            std::string::npos);
  EXPECT_NE(refusal(entry_in("/dev/shm/gpuemu-../etc", 0, 8), SegmentUse::borrow).find("not a file"),
            std::string::npos);
  EXPECT_NE(refusal(entry_in("/dev/shm/gpuemu-gone-0", 0, 8), SegmentUse::borrow).find("cannot be opened"),
            std::string::npos);
  EXPECT_NE(refusal(entry_in(file.path, 4, 8), SegmentUse::borrow).find("lies outside its segment's 8 bytes"),
            std::string::npos);
  json wrong_type = entry_in(file.path, 0, 8);
  wrong_type["segment"] = 3;
  EXPECT_NE(refusal(wrong_type, SegmentUse::borrow).find("must be a file path"), std::string::npos);
  SegmentFile shared({1.0f, 2.0f}, 0644);
  EXPECT_NE(refusal(entry_in(shared.path, 0, 8), SegmentUse::borrow).find("mode 0600"), std::string::npos);
  const std::string link =
      std::string(kSegmentDir) + kSegmentPrefix + "test-link-" + std::to_string(::getpid());
  ASSERT_EQ(::symlink(file.path.c_str(), link.c_str()), 0);
  EXPECT_NE(refusal(entry_in(link, 0, 8), SegmentUse::borrow).find("cannot be opened"), std::string::npos);
  ::unlink(link.c_str());
}

}  // namespace
}  // namespace gpuemu::wire
