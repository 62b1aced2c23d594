// The message codec against the shared vectors (tests/vectors/protocol/messages.json), which the
// Python suite loads too: every good vector decodes to its stated form and re-encodes byte for
// byte; every bad one is refused with its error kind.
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "daemon/codec.hpp"
#include "daemon_test_support.hpp"
#include "util/json_number.hpp"

namespace gpuemu::daemon {
namespace {

using testing::bytes_of;
using testing::from_hex;
using testing::load_vectors;

bool same_value(double expected, double actual) {
  return std::isnan(expected) ? std::isnan(actual)
                              : expected == actual && std::signbit(expected) == std::signbit(actual);
}

TEST(Codec, GoodVectorsDecodeToTheirStatedForm) {
  const auto vectors = load_vectors();
  ASSERT_GE(vectors["good"].size(), 5u);
  for (const auto& v : vectors["good"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const auto decoded = decode_message(bytes_of(from_hex(v["hex"])));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->header, v["header"]);
    ASSERT_EQ(decoded->tensors.size(), v["tensors"].size());
    for (const auto& [name, expected] : v["tensors"].items()) {
      SCOPED_TRACE(name);
      const auto& t = decoded->tensors.at(name);
      EXPECT_EQ(tensor::dtype_name(t.dtype), expected["dtype"].get<std::string>());
      EXPECT_EQ(t.shape, expected["shape"].get<tensor::Shape>());
      EXPECT_EQ(t.strides, expected["strides"].get<std::vector<std::int64_t>>());
      const auto values = t.to_doubles();
      ASSERT_EQ(values.size(), expected["values"].size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto& e = expected["values"][i];
        const double want = e.is_boolean() ? (e.get<bool>() ? 1.0 : 0.0) : *util::read_json_number(e);
        EXPECT_TRUE(same_value(want, values[i])) << "element " << i << ": " << values[i] << " != " << e;
      }
    }
  }
}

TEST(Codec, GoodVectorsReencodeByteForByte) {
  // Named: a range-for over a member of a temporary would read freed memory (ASan caught it).
  const nlohmann::json vectors = load_vectors();
  for (const auto& v : vectors["good"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const std::string raw = from_hex(v["hex"]);
    const auto decoded = decode_message(bytes_of(raw));
    ASSERT_TRUE(decoded);
    nlohmann::json header = decoded->header;
    std::vector<std::pair<std::string, const tensor::Tensor*>> order;
    for (const auto& entry : header.value("tensors", nlohmann::json::array())) {
      const auto name = entry["name"].get<std::string>();
      order.emplace_back(name, &decoded->tensors.at(name));
    }
    header.erase("tensors");
    EXPECT_EQ(encode_message(header, order), raw);
  }
}

TEST(Codec, BadVectorsAreRefusedAsBadMessages) {
  const auto vectors = load_vectors();
  ASSERT_GE(vectors["bad"].size(), 15u);
  for (const auto& v : vectors["bad"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const auto decoded = decode_message(bytes_of(from_hex(v["hex"])));
    ASSERT_FALSE(decoded);
    EXPECT_EQ(wire_error_name(decoded.error().kind), v["error_kind"].get<std::string>());
    EXPECT_FALSE(decoded.error().message.empty());
  }
}

TEST(Codec, NonFiniteHeaderValuesBecomeStrings) {
  const nlohmann::json header = {{"a", std::nan("")}, {"b", {HUGE_VAL, -HUGE_VAL, 1.5}}};
  const std::string raw = encode_message(header);
  const auto decoded = decode_message(bytes_of(raw));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->header["a"], "NaN");
  EXPECT_EQ(decoded->header["b"], nlohmann::json({"Infinity", "-Infinity", 1.5}));
}

TEST(Codec, EveryTruncationOfAGoodMessageIsRefused) {
  const auto v = load_vectors()["good"][2];
  const std::string raw = from_hex(v["hex"]);
  for (std::size_t n = 0; n < raw.size(); ++n) {
    const auto decoded = decode_message(bytes_of(raw.substr(0, n)));
    ASSERT_FALSE(decoded) << "accepted the first " << n << " of " << raw.size() << " bytes";
    EXPECT_EQ(decoded.error().kind, WireError::bad_message);
  }
}

TEST(Codec, FlippedBytesNeverCrashTheDecoder) {
  const std::string raw = from_hex(load_vectors()["good"][3]["hex"]);
  std::uint32_t state = 12345;
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = raw;
    for (int k = 0; k < 3; ++k) {
      state = state * 1664525u + 1013904223u;
      mutated[state % mutated.size()] = static_cast<char>(state >> 24);
    }
    const auto decoded = decode_message(bytes_of(mutated));
    if (decoded) {
      for (const auto& [name, t] : decoded->tensors) (void)t.to_doubles();  // must be safe to read
    }
  }
}

}  // namespace
}  // namespace gpuemu::daemon
