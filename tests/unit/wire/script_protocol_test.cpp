// Tests for the JSON+base64 script protocol (wire/script_protocol.hpp): request text, both reply
// forms, and every way a reply can be malformed.
#include "wire/script_protocol.hpp"

#include <gtest/gtest.h>

namespace gpuemu::wire {
namespace {

tensor::Tensor iota(tensor::DType dtype, tensor::Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(tensor::shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) * 0.5;
  return tensor::Tensor::from_doubles(dtype, std::move(shape), values);
}

TEST(ScriptProtocol, RequestHasInputsInOrderKwargsAndCaseDtype) {
  Tensors inputs;
  inputs["b"] = iota(tensor::DType::float32, {2});
  inputs["a"] = iota(tensor::DType::float16, {1});
  nlohmann::json kwargs = {{"dim", -1}};
  std::string text = encode_request(inputs, {"b", "a"}, kwargs, tensor::DType::bfloat16);
  ASSERT_TRUE(text.ends_with("\n"));
  EXPECT_EQ(
      text,
      "{\"inputs\":{\"b\":{\"shape\":[2],\"strides\":[1],\"dtype\":\"float32\",\"data\":\"AAAAAAAAAD8=\"},"
      "\"a\":{\"shape\":[1],\"strides\":[1],\"dtype\":\"float16\",\"data\":\"AAA=\"}},"
      "\"kwargs\":{\"dim\":-1},\"dtype\":\"bfloat16\"}\n");
  auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["inputs"].size(), 2u);
}

TEST(ScriptProtocol, AdapterFieldsFollowTheCaseDtype) {
  Tensors inputs;
  inputs["x"] = iota(tensor::DType::float32, {1});
  std::string text =
      encode_request(inputs, {}, nlohmann::json::object(), tensor::DType::bfloat16, "pytorch", "float32");
  EXPECT_TRUE(
      text.ends_with("\"dtype\":\"bfloat16\",\"framework\":\"pytorch\",\"numpy_bfloat16\":\"float32\"}\n"))
      << text;
  // numpy is the protocol's default and is not spelled out; the bfloat16 form always is.
  text = encode_request(inputs, {}, nlohmann::json::object(), tensor::DType::bfloat16, "numpy", "ml_dtypes");
  EXPECT_TRUE(text.ends_with("\"dtype\":\"bfloat16\",\"numpy_bfloat16\":\"ml_dtypes\"}\n")) << text;
}

TEST(ScriptProtocol, RequestCarriesTheCaseSeedAsADecimalString) {
  Tensors inputs;
  inputs["x"] = iota(tensor::DType::float32, {1});
  const auto parsed =
      nlohmann::json::parse(encode_request(inputs, {}, nlohmann::json::object(), tensor::DType::float32,
                                           "pytorch", "ml_dtypes", std::uint64_t{18446744073709551557u}));
  EXPECT_EQ(parsed["seed"], "18446744073709551557");
  EXPECT_FALSE(
      nlohmann::json::parse(encode_request(inputs, {}, {}, tensor::DType::float32)).contains("seed"));
}

TEST(ScriptProtocol, NamesNotInOrderComeAfterSorted) {
  Tensors inputs;
  inputs["z"] = iota(tensor::DType::float32, {1});
  inputs["y"] = iota(tensor::DType::float32, {1});
  inputs["x"] = iota(tensor::DType::float32, {1});
  std::string text = encode_request(inputs, {"z"}, nlohmann::json::object(), tensor::DType::float32);
  auto z = text.find("\"z\""), x = text.find("\"x\""), y = text.find("\"y\"");
  EXPECT_LT(z, x);
  EXPECT_LT(x, y);
}

TEST(ScriptProtocol, StridedInputSendsStorageAndStrides) {
  tensor::Tensor t = tensor::with_layout(iota(tensor::DType::float32, {2, 3}), tensor::Layout::transposed);
  Tensors inputs{{"x", t}};
  auto j = nlohmann::json::parse(encode_request(inputs, {}, {}, tensor::DType::float32));
  EXPECT_EQ(j["inputs"]["x"]["strides"], nlohmann::json(t.strides));
  auto back = tensor_from_json(j["inputs"]["x"], "x");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->to_doubles(), t.to_doubles());
  EXPECT_EQ(j["kwargs"], nlohmann::json::object());
}

TEST(ScriptProtocol, SingleTensorReplyIsNamedOut) {
  tensor::Tensor t = iota(tensor::DType::float64, {2, 2});
  std::string reply = "  \n" + tensor_to_json(t).dump() + "\n\n";
  auto out = decode_response(reply, "reference ref.py");
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ(out->at("out").to_doubles(), t.to_doubles());
  EXPECT_EQ(out->at("out").dtype, tensor::DType::float64);
}

TEST(ScriptProtocol, ReplyWithoutStridesIsContiguous) {
  nlohmann::json j = {{"shape", {3}}, {"dtype", "int32"}, {"data", "AQAAAAIAAAADAAAA"}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->at("out").to_doubles(), (std::vector<double>{1, 2, 3}));
}

TEST(ScriptProtocol, NamedOutputsReply) {
  nlohmann::json j = {{"outputs",
                       {{"y", tensor_to_json(iota(tensor::DType::float32, {3}))},
                        {"idx", tensor_to_json(iota(tensor::DType::int64, {2}))}}}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->size(), 2u);
  EXPECT_EQ(out->at("idx").dtype, tensor::DType::int64);
}

TEST(ScriptProtocol, GarbageIsQuotedAndBounded) {
  std::string garbage = "Loading model...\n" + std::string(1000, 'x');
  auto out = decode_response(garbage, "reference scripts/ref.py");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().kind, ErrorKind::parse);
  EXPECT_EQ(out.error().message,
            "reference scripts/ref.py printed something other than one JSON reply on stdout (print logs to "
            "stderr): 'Loading model...\\n" +
                std::string(183, 'x') + "' ... (1017 bytes in all)");
}

TEST(ScriptProtocol, BannerBeforeJsonIsAnError) {
  auto out = decode_response("hello\n{\"shape\":[],\"dtype\":\"float32\",\"data\":\"AAAAAA==\"}", "op k.py");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("'hello\\n{"), std::string::npos);
}

TEST(ScriptProtocol, EmptyStdout) {
  auto out = decode_response(" \n", "op k.py");
  ASSERT_FALSE(out);
  EXPECT_EQ(
      out.error().message,
      "op k.py printed nothing on stdout; it must print one JSON tensor or {\"outputs\": {name: tensor}}");
}

TEST(ScriptProtocol, WrongLengthIsRejected) {
  nlohmann::json j = {{"shape", {2, 2}}, {"dtype", "float32"}, {"data", "AAAAAA=="}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message,
            "the output of op k.py: \"data\" holds 4 bytes but shape [2, 2] of float32 needs 16");
}

TEST(ScriptProtocol, StridesReachingPastDataAreRejected) {
  nlohmann::json j = {
      {"shape", {2, 2}}, {"strides", {4, 1}}, {"dtype", "float32"}, {"data", "AAAAAAAAAAAAAAAAAAAAAA=="}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().kind, ErrorKind::parse);
}

TEST(ScriptProtocol, UnknownDtypeSuggestsNames) {
  nlohmann::json j = {{"shape", {1}}, {"dtype", "float8"}, {"data", "AA=="}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("unknown dtype \"float8\"; use one of float16, bfloat16"),
            std::string::npos)
      << out.error().message;
}

TEST(ScriptProtocol, BadBase64) {
  nlohmann::json j = {{"shape", {1}}, {"dtype", "float32"}, {"data", "!!!!"}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message,
            "the output of op k.py: \"data\" is not valid base64 (standard alphabet, with padding)");
}

TEST(ScriptProtocol, ObjectOfTheWrongShape) {
  auto out = decode_response("{\"result\": 1}", "op k.py");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message,
            "op k.py printed an object with keys [\"result\"]; expected one tensor {\"shape\", \"dtype\", "
            "\"data\"} "
            "or {\"outputs\": {name: tensor}}");
  EXPECT_FALSE(decode_response("[1,2]", "op k.py"));
  EXPECT_FALSE(decode_response("{\"outputs\": {}}", "op k.py"));
  EXPECT_FALSE(decode_response("{\"outputs\": {\"y\": 3}}", "op k.py"));
  EXPECT_FALSE(decode_response("{\"shape\": [-1], \"dtype\": \"float32\", \"data\": \"\"}", "op k.py"));
  EXPECT_FALSE(decode_response("{\"shape\": \"x\", \"dtype\": \"float32\", \"data\": \"\"}", "op k.py"));
}

TEST(ScriptProtocol, ZeroSizedTensor) {
  nlohmann::json j = {{"shape", {0, 3}}, {"dtype", "float32"}, {"data", ""}};
  auto out = decode_response(j.dump(), "op k.py");
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->at("out").numel(), 0);
}

}  // namespace
}  // namespace gpuemu::wire
