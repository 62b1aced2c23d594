// Tests for tensor::Storage: views never copy on reads, any write gives the view its own bytes,
// and own() detaches from the keeper.
#include "tensor/storage.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace gpuemu::tensor {
namespace {

std::shared_ptr<std::vector<std::byte>> bytes_of(std::initializer_list<int> values) {
  auto out = std::make_shared<std::vector<std::byte>>();
  for (int v : values) out->push_back(static_cast<std::byte>(v));
  return out;
}

TEST(Storage, ViewReadsTheKeepersBytesWithoutCopying) {
  auto buffer = bytes_of({1, 2, 3, 4});
  const Storage s =
      Storage::view(buffer, std::span<const std::byte>(*buffer).subspan(1, 2), "/dev/shm/gpuemu-x", 7);
  EXPECT_TRUE(s.is_view());
  EXPECT_EQ(s.data(), buffer->data() + 1);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1], std::byte{3});
  EXPECT_EQ(s.segment(), "/dev/shm/gpuemu-x");
  EXPECT_EQ(s.segment_offset(), 7u);
  const Storage copy = s;  // a copy of a view is another view of the same bytes
  EXPECT_EQ(copy.data(), s.data());
}

TEST(Storage, WritingAViewCopiesFirstAndLeavesTheKeeperAlone) {
  auto buffer = bytes_of({1, 2, 3});
  Storage s = Storage::view(buffer, *buffer, "/dev/shm/gpuemu-x", 0);
  s[0] = std::byte{9};
  EXPECT_FALSE(s.is_view());
  EXPECT_TRUE(s.segment().empty());
  EXPECT_EQ((*buffer)[0], std::byte{1});
  EXPECT_EQ(s[0], std::byte{9});
  EXPECT_EQ(s[2], std::byte{3});
  Storage grown = Storage::view(buffer, *buffer);
  grown.resize(5);
  EXPECT_EQ(grown.size(), 5u);
  EXPECT_EQ(buffer->size(), 3u);
}

TEST(Storage, OwnKeepsTheBytesAfterTheKeeperGoes) {
  auto buffer = bytes_of({5, 6});
  Storage s = Storage::view(buffer, *buffer);
  s.own();
  EXPECT_FALSE(s.is_view());
  (*buffer)[0] = std::byte{0};  // the owner reuses its buffer: the owned copy does not change
  buffer.reset();
  EXPECT_EQ(s, Storage(std::vector<std::byte>{std::byte{5}, std::byte{6}}));
}

TEST(Storage, ViewWithoutKeeperCopies) {
  std::vector<std::byte> local{std::byte{1}};
  Storage s = Storage::view(nullptr, local);
  EXPECT_FALSE(s.is_view());
  EXPECT_NE(s.data(), local.data());
  EXPECT_EQ(s[0], std::byte{1});
}

TEST(Storage, EqualityComparesBytesNotOwnership) {
  auto buffer = bytes_of({1, 2});
  EXPECT_EQ(Storage::view(buffer, *buffer), Storage(*buffer));
  EXPECT_FALSE(Storage::view(buffer, *buffer) == Storage(std::vector<std::byte>{std::byte{1}}));
}

}  // namespace
}  // namespace gpuemu::tensor
