// Tests for make_json_skeleton (wire/json_skeleton.hpp): long strings are cut out exactly,
// escapes and short strings pass through, and big replies decode as the DOM path would.
#include "wire/json_skeleton.hpp"

#include <gtest/gtest.h>

#include "wire/script_protocol.hpp"

namespace gpuemu::wire {
namespace {

TEST(JsonSkeleton, CutsOutLongStringsOnly) {
  std::string big(2000, 'A');
  std::string text = "{\"data\": \"" + big + "\", \"dtype\": \"float32\", \"k\": \"a\\\"b\"}";
  JsonSkeleton s = make_json_skeleton(text);
  ASSERT_EQ(s.strings.size(), 1u);
  EXPECT_EQ(s.strings[0], big);
  EXPECT_EQ(s.text, "{\"data\": \"\\u0001gpuemu-string-0\", \"dtype\": \"float32\", \"k\": \"a\\\"b\"}");
  auto j = nlohmann::json::parse(s.text);
  EXPECT_EQ(s.string_value(j["data"]), std::optional<std::string_view>(big));
  EXPECT_EQ(s.string_value(j["k"]), std::optional<std::string_view>("a\"b"));
  EXPECT_EQ(s.string_value(j["nothing"]), std::nullopt);
}

TEST(JsonSkeleton, LongStringsWithEscapesStayInPlace) {
  std::string big(1500, 'x');
  big[700] = '\\';
  big[701] = '"';
  std::string text = "[\"" + big + "\", \"" + std::string(1100, 'y') + "\"]";
  JsonSkeleton s = make_json_skeleton(text);
  ASSERT_EQ(s.strings.size(), 1u);
  EXPECT_EQ(s.strings[0], std::string(1100, 'y'));
  auto j = nlohmann::json::parse(s.text);
  EXPECT_EQ(j[0].get<std::string>().size(), 1499u);
}

TEST(JsonSkeleton, MalformedTextPassesThrough) {
  std::string unterminated = "{\"data\": \"" + std::string(5000, 'A');
  EXPECT_EQ(make_json_skeleton(unterminated).text, unterminated);
  EXPECT_EQ(make_json_skeleton("abc\\").text, "abc\\");
  EXPECT_EQ(make_json_skeleton("\"\\").text, "\"\\");
}

TEST(JsonSkeleton, BigReplyDecodesLikeTheDomPath) {
  std::vector<double> values(100000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) * 0.25;
  auto t = tensor::Tensor::from_doubles(tensor::DType::float32, {1000, 100}, values);
  nlohmann::json reply = {{"outputs", {{"y", tensor_to_json(t)}, {"z", tensor_to_json(t)}}}};
  auto out = decode_response(reply.dump(), "op k.py");
  ASSERT_TRUE(out) << out.error().message;
  auto dom = tensor_from_json(reply["outputs"]["y"], "y");
  ASSERT_TRUE(dom);
  EXPECT_TRUE(out->at("y").data == dom->data);
  EXPECT_TRUE(out->at("z").data == t.data);

  nlohmann::json bad = tensor_to_json(t);
  bad["data"] = bad["data"].get<std::string>().substr(4);
  auto err = decode_response(bad.dump(), "op k.py");
  ASSERT_FALSE(err);
  EXPECT_EQ(
      err.error().message,
      "the output of op k.py: \"data\" holds 399997 bytes but shape [1000, 100] of float32 needs 400000");
}

}  // namespace
}  // namespace gpuemu::wire
