// Tests for warm-worker frames (wire/frames.hpp): the prefix, call frames, and result frames
// with every kind of bad tensor entry.
#include "wire/frames.hpp"

#include <cstring>

#include <gtest/gtest.h>

namespace gpuemu::wire {
namespace {

using nlohmann::json;

std::span<const std::byte, kFramePrefixSize> prefix_of(const std::string& head) {
  return std::span<const std::byte, kFramePrefixSize>(reinterpret_cast<const std::byte*>(head.data()),
                                                      kFramePrefixSize);
}

TEST(Frames, PrefixRoundTrips) {
  auto bytes = encode_frame_prefix({123, 0x1'0000'0005ull});
  EXPECT_EQ(std::memcmp(bytes.data(), "GEMU\x01\x00\x00\x00{\x00\x00\x00", 12), 0);
  auto back = decode_frame_prefix(bytes, "w");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->header_bytes, 123u);
  EXPECT_EQ(back->payload_bytes, 0x1'0000'0005ull);
}

TEST(Frames, BadPrefixes) {
  auto bytes = encode_frame_prefix({2, 0});
  bytes[0] = std::byte{'h'};
  bytes[1] = std::byte{'i'};
  bytes[2] = std::byte{'\n'};
  auto bad = decode_frame_prefix(bytes, "op m:f worker");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "op m:f worker wrote 'hi\\x0aU' where a frame should start (expected 'GEMU'); is something in "
            "the worker "
            "printing to its stdout?");
  bytes = encode_frame_prefix({2, 0});
  bytes[4] = std::byte{9};
  EXPECT_EQ(decode_frame_prefix(bytes, "w").error().message,
            "w speaks worker protocol version 9, this gpuemu speaks 1: install the gpuemu Python package of "
            "the same "
            "release");
  EXPECT_FALSE(decode_frame_prefix(encode_frame_prefix({kMaxFrameHeader + 1, 0}), "w"));
}

TEST(Frames, CallFrameLaysOutTensorsInOrderWithoutCopying) {
  Tensors inputs;
  inputs["b"] = tensor::Tensor::from_doubles(tensor::DType::float32, {2}, std::vector<double>{1, 2});
  inputs["a"] = tensor::Tensor::from_doubles(tensor::DType::int64, {1}, std::vector<double>{7});
  OutgoingFrame frame =
      encode_call_frame("softmax", tensor::DType::float16, inputs, {"b", "a"}, json{{"dim", 1}});
  auto prefix = decode_frame_prefix(prefix_of(frame.head), "w");
  ASSERT_TRUE(prefix);
  EXPECT_EQ(prefix->payload_bytes, 16u);
  EXPECT_EQ(frame.size(), kFramePrefixSize + prefix->header_bytes + 16);
  json header = json::parse(frame.head.substr(kFramePrefixSize));
  EXPECT_EQ(header["type"], "call");
  EXPECT_EQ(header["op"], "softmax");
  EXPECT_EQ(header["dtype"], "float16");
  EXPECT_EQ(header["kwargs"], json({{"dim", 1}}));
  EXPECT_EQ(header["tensors"][0], json({{"name", "b"},
                                        {"dtype", "float32"},
                                        {"shape", {2}},
                                        {"strides", {1}},
                                        {"offset", 0},
                                        {"nbytes", 8}}));
  EXPECT_EQ(header["tensors"][1]["offset"], 8);
  ASSERT_EQ(frame.payload.size(), 2u);
  EXPECT_EQ(frame.payload[0].data(), inputs["b"].data.data());  // points at the tensor, no copy
}

TEST(Frames, CallFrameCarriesTheCaseSeedAsADecimalString) {
  Tensors inputs;
  inputs["x"] = tensor::Tensor::from_doubles(tensor::DType::float32, {1}, std::vector<double>{1});
  const auto header_of = [](const OutgoingFrame& frame) {
    return json::parse(frame.head.substr(kFramePrefixSize));
  };
  const json seeded =
      header_of(encode_call_frame("op", tensor::DType::float32, inputs, {}, json::object(), nullptr,
                                  InputFiles::send_bytes, nullptr, std::uint64_t{18446744073709551557u}));
  EXPECT_EQ(seeded["seed"], "18446744073709551557");  // a uint64 beyond a double's exact integers
  EXPECT_FALSE(header_of(encode_call_frame("op", tensor::DType::float32, inputs, {}, json::object()))
                   .contains("seed"));
}

IncomingFrame result_frame(json tensors, std::size_t payload_bytes) {
  IncomingFrame f;
  f.header = {{"type", "result"}, {"tensors", std::move(tensors)}};
  f.payload->assign(payload_bytes, std::byte{0});
  return f;
}

TEST(Frames, ResultFrameDecodes) {
  IncomingFrame f = result_frame(json::array({{{"name", "y"},
                                               {"dtype", "float32"},
                                               {"shape", {2}},
                                               {"strides", {1}},
                                               {"offset", 4},
                                               {"nbytes", 8}}}),
                                 12);
  float two = 2.0f;
  std::memcpy(f.payload->data() + 8, &two, 4);
  auto out = decode_result_frame(f, "op m:f");
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->at("y").to_doubles(), (std::vector<double>{0, 2}));
}

TEST(Frames, ResultFrameRejectsBadEntries) {
  auto entry = [](json patch) {
    json e = {{"name", "y"},    {"dtype", "float32"}, {"shape", {2}},
              {"strides", {1}}, {"offset", 0},        {"nbytes", 8}};
    e.update(patch);
    return e;
  };
  EXPECT_EQ(
      decode_result_frame(result_frame(json::array({entry({{"nbytes", 16}})}), 8), "op m:f").error().message,
      "output 'y' of op m:f lies outside the frame's 8 payload bytes (offset 0, nbytes 16)");
  EXPECT_FALSE(decode_result_frame(result_frame(json::array({entry({{"dtype", "float8"}})}), 8), "w"));
  EXPECT_FALSE(decode_result_frame(result_frame(json::array({entry({{"shape", {3}}})}), 8), "w"));
  EXPECT_FALSE(decode_result_frame(result_frame(json::array({entry({{"offset", -1}})}), 8), "w"));
  EXPECT_FALSE(decode_result_frame(result_frame(json::array({entry({{"name", 3}})}), 8), "w"));
  EXPECT_FALSE(
      decode_result_frame(result_frame(json::array({entry(json::object()), entry(json::object())}), 8), "w"));
  EXPECT_EQ(decode_result_frame(result_frame(json::array(), 0), "op m:f").error().message,
            "op m:f sent a result frame without tensors");
}

}  // namespace
}  // namespace gpuemu::wire
