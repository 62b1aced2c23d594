// Tests for shared-memory segments (run/segment.hpp) and tensor entries that name them
// (decode_tensor_entries with a TensorSource): borrow keeps the file, lend hands it back once its
// last view goes, and every file that is not one of ours is refused with a message naming it.
#include "run/segment.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "run/frames.hpp"

namespace gpuemu::run {
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

TEST(Segment, BorrowedEntryIsAViewOfTheFile) {
  SegmentFile file({1.0f, 2.0f, 3.0f});
  const json header = {{"tensors", json::array({entry_in(file.path, 4, 8)})}};
  auto tensors =
      decode_tensor_entries(header, TensorSource{{}, nullptr, SegmentUse::borrow}, "the client", "tensor");
  ASSERT_TRUE(tensors) << tensors.error().message;
  const auto& x = tensors->at("x");
  EXPECT_EQ(x.to_doubles(), (std::vector<double>{2.0, 3.0}));
  EXPECT_TRUE(x.data.is_view());
  EXPECT_EQ(x.data.segment(), file.path);
  EXPECT_EQ(x.data.segment_offset(), 4u);
  EXPECT_TRUE(std::filesystem::exists(file.path));  // borrowed: the client's file stays
}

TEST(Segment, LentSegmentIsReleasedWhenItsLastTensorGoes) {
  SegmentFile file({4.0f, 5.0f});
  const json header = {{"tensors", json::array({entry_in(file.path, 0, 8)})}};
  auto releases = std::make_shared<SegmentReleases>();
  auto tensors = decode_tensor_entries(header, TensorSource{{}, nullptr, SegmentUse::lend, releases},
                                       "worker", "output");
  ASSERT_TRUE(tensors) << tensors.error().message;
  EXPECT_TRUE(std::filesystem::exists(file.path));  // lent, not given: the worker refills it later
  auto kept = tensors->at("x");
  tensors->clear();
  EXPECT_TRUE(releases->take().empty());  // a tensor still reads it
  EXPECT_EQ(kept.to_doubles(), (std::vector<double>{4.0, 5.0}));
  kept = {};
  EXPECT_EQ(releases->take(), std::vector<std::string>{file.path});
  EXPECT_TRUE(releases->take().empty());
}

TEST(Segment, MappingsAreReusedWhileTheFileLivesAndSeeItsNewContents) {
  SegmentFile file({1.0f, 2.0f});
  auto first = map_segment(file.path, SegmentUse::borrow, "client");
  ASSERT_TRUE(first) << first.error().message;
  const int fd = ::open(file.path.c_str(), O_WRONLY);
  const float nine = 9.0f;
  ASSERT_EQ(::pwrite(fd, &nine, 4, 0), 4);  // the client refills its file for the next request
  ::close(fd);
  auto second = map_segment(file.path, SegmentUse::borrow, "client");
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(first->get(), second->get());
  float seen = 0;
  std::memcpy(&seen, (*second)->bytes().data(), 4);
  EXPECT_EQ(seen, 9.0f);
  EXPECT_TRUE((*second)->still_linked());
  ::unlink(file.path.c_str());
  EXPECT_FALSE((*second)->still_linked());
  forget_removed_segments();  // the cache lets go; our own references still read the old pages
  std::memcpy(&seen, (*first)->bytes().data() + 4, 4);
  EXPECT_EQ(seen, 2.0f);
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
}  // namespace gpuemu::run
