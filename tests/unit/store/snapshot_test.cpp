// Input snapshots: exact byte round trip, and damaged blobs refused with an error naming the field.
#include "store/snapshot.hpp"

#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace gpuemu::store {
namespace {

using testing::expect_same_tensors;
using testing::sample_inputs;

TEST(Snapshot, RoundTripsBytesExactly) {
  const auto inputs = sample_inputs();
  const auto blob = encode_snapshot(inputs);
  auto decoded = decode_snapshot(blob, "test snapshot");
  ASSERT_TRUE(decoded) << decoded.error().message;
  expect_same_tensors(*decoded, inputs);
  EXPECT_EQ(encode_snapshot(*decoded), blob);
}

TEST(Snapshot, EmptySetRoundTrips) {
  const auto blob = encode_snapshot({});
  EXPECT_EQ(blob.size(), 12u);
  auto decoded = decode_snapshot(blob, "empty");
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(decoded->empty());
}

TEST(Snapshot, EveryTruncationIsAnError) {
  const auto blob = encode_snapshot(sample_inputs());
  for (std::size_t size = 0; size < blob.size(); ++size) {
    std::vector<std::byte> cut(blob.begin(), blob.begin() + static_cast<std::ptrdiff_t>(size));
    auto decoded = decode_snapshot(cut, "snapshot of failure 7");
    ASSERT_FALSE(decoded) << "size " << size;
    EXPECT_EQ(decoded.error().kind, ErrorKind::parse);
    EXPECT_NE(decoded.error().message.find("snapshot of failure 7 is damaged"), std::string::npos);
  }
}

TEST(Snapshot, RejectsBadMagicDtypeTrailingBytesAndOutOfBoundsViews) {
  tensor::NamedTensors one;
  one["x"] = testing::random_tensor(tensor::DType::float32, {2, 2}, {2, 1}, 16, 9);
  const auto blob = encode_snapshot(one);

  auto bad_magic = blob;
  bad_magic[0] = std::byte{'X'};
  auto r1 = decode_snapshot(bad_magic, "s");
  ASSERT_FALSE(r1);
  EXPECT_NE(r1.error().message.find("does not start with GPUEMUS1"), std::string::npos);

  auto bad_dtype = blob;
  const std::size_t dtype_at = 8 + 4 + 4 + 1;  // magic, count, name length, "x"
  bad_dtype[dtype_at] = std::byte{42};
  auto r2 = decode_snapshot(bad_dtype, "s");
  ASSERT_FALSE(r2);
  EXPECT_NE(r2.error().message.find("tensor 'x' has unknown dtype number 42"), std::string::npos);

  auto trailing = blob;
  trailing.push_back(std::byte{0});
  auto r3 = decode_snapshot(trailing, "s");
  ASSERT_FALSE(r3);
  EXPECT_NE(r3.error().message.find("1 bytes follow the last tensor"), std::string::npos);

  // Strides that reach past the data: a view that would read out of bounds.
  tensor::NamedTensors wide;
  wide["x"] = testing::random_tensor(tensor::DType::float32, {2, 2}, {4, 1}, 16, 9);
  auto r4 = decode_snapshot(encode_snapshot(wide), "s");
  ASSERT_FALSE(r4);
  EXPECT_EQ(r4.error().kind, ErrorKind::parse);
}

TEST(Snapshot, MissingStridesAreWrittenAsContiguous) {
  tensor::NamedTensors one;
  one["x"] = testing::random_tensor(tensor::DType::float64, {2, 3}, {}, 48, 5);
  auto decoded = decode_snapshot(encode_snapshot(one), "s");
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->at("x").strides, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(decoded->at("x").data, one["x"].data);
}

}  // namespace
}  // namespace gpuemu::store
