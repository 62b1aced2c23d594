// Requests through handle_message with a real store and a real Python reference: malformed and
// ill-typed requests get error replies of the documented kinds (and the next request still works),
// validate stores failures with their inputs, and get_test_batch matches the fuzz case stream.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "daemon/codec.hpp"
#include "daemon/request_table.hpp"
#include "daemon_test_support.hpp"
#include "engine/replay.hpp"
#include "fuzz/case.hpp"
#include "fuzz/corners.hpp"

namespace gpuemu::daemon {
namespace {

using testing::bytes_of;
using testing::from_hex;
using testing::load_vectors;

namespace fs = std::filesystem;

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "refs");
    std::ofstream(dir_ / "refs" / "relu_ref.py")
        << "import numpy as np\n"
           "from gpuemu.script import serve\n"
           "def relu(inputs, **kwargs):\n"
           "    return np.maximum(np.asarray(inputs['x'], dtype=np.float64), 0)\n"
           "serve(relu, role='reference')\n";
    std::ofstream(dir_ / "gpuemu.toml")
        << "[project]\nname = \"dispatch\"\n"
           "[validation]\ndtypes = [\"float32\"]\n"
           "[[ops]]\nname = \"relu\"\nreference = \"refs/relu_ref.py\"\n"
           "execution_mode = \"client_side\"\ninput_names = [\"x\"]\n"
           "[ops.schema]\ndims = { M = [1, 8], N = [1, 16] }\ninputs = { x = [\"M\", \"N\"] }\n";
    auto state =
        DaemonState::open({dir_ / "gpuemu.sock", dir_ / "db" / "gpuemu.db", dir_ / "gpuemu.toml", {}});
    ASSERT_TRUE(state) << state.error().message;
    state_ = std::move(*state);
  }
  void TearDown() override { state_.reset(); }

  Message call(const std::string& bytes) {
    const std::string reply = handle_message(*state_, bytes_of(bytes));
    auto decoded = decode_message(bytes_of(reply));
    EXPECT_TRUE(decoded) << "the reply is not a protocol message";
    return decoded ? std::move(*decoded) : Message{};
  }
  Message call(nlohmann::json header,
               const std::vector<std::pair<std::string, tensor::Tensor>>& tensors = {}) {
    header["protocol_version"] = kProtocolVersion;
    return call(encode_message(std::move(header), tensors));
  }
  void expect_error(const Message& reply, const std::string& kind) {
    EXPECT_EQ(reply.header.value("ok", true), false) << reply.header.dump();
    EXPECT_EQ(reply.header["type"], "error");
    EXPECT_EQ(reply.header["error"]["kind"], kind) << reply.header.dump();
    EXPECT_FALSE(reply.header["error"]["message"].get<std::string>().empty());
  }
  void expect_ping_works() {
    const auto pong = call({{"type", "ping"}});
    EXPECT_EQ(pong.header["ok"], true);
    EXPECT_EQ(pong.header["protocol_version"], kProtocolVersion);
  }

  const gpuemu::testing::TempDir temp_{"gpuemu-dispatch"};
  const fs::path dir_ = temp_.path();
  std::unique_ptr<DaemonState> state_;
};

TEST_F(DispatchTest, PingAnswersVersionAndUptime) {
  const auto reply = call({{"type", "ping"}, {"id", 7}});
  EXPECT_EQ(reply.header["ok"], true);
  EXPECT_EQ(reply.header["type"], "ping");
  EXPECT_EQ(reply.header["id"], 7);
  EXPECT_EQ(reply.header["version"], GPUEMU_VERSION);
  EXPECT_GE(reply.header["uptime_secs"].get<double>(), 0.0);
}

TEST_F(DispatchTest, SharedBadVectorsGetErrorRepliesAndServingGoesOn) {
  const auto vectors = load_vectors();
  for (const char* group : {"bad", "bad_requests"}) {
    for (const auto& v : vectors[group]) {
      SCOPED_TRACE(v["name"].get<std::string>());
      expect_error(call(from_hex(v["hex"])), v["error_kind"]);
      expect_ping_works();
    }
  }
}

TEST_F(DispatchTest, UnknownRequestSuggestsTheNearName) {
  const auto reply = call({{"type", "list_failure"}});
  expect_error(reply, "bad_request");
  EXPECT_NE(reply.header["error"]["message"].get<std::string>().find("list_failures"), std::string::npos);
  EXPECT_EQ(reply.header["request"], "list_failure");
}

TEST_F(DispatchTest, UnknownOpIsAConfigErrorWithASuggestion) {
  const auto reply = call({{"type", "get_test_case"}, {"op", "rleu"}});
  expect_error(reply, "config");
  EXPECT_NE(reply.header["error"]["message"].get<std::string>().find("did you mean 'relu'"),
            std::string::npos);
}

TEST_F(DispatchTest, ValidateStoresAFailureThatReplaysFromItsSnapshot) {
  const auto x =
      tensor::Tensor::from_doubles(tensor::DType::float32, {2, 2}, std::vector<double>{-1, 2, -3, 4});
  const auto good =
      tensor::Tensor::from_doubles(tensor::DType::float32, {2, 2}, std::vector<double>{0, 2, 0, 4});
  const auto bad =
      tensor::Tensor::from_doubles(tensor::DType::float32, {2, 2}, std::vector<double>{0, 2, 0, 5});

  auto passed = call({{"type", "validate"}, {"op", "relu"}, {"seed", "18446744073709551615"}},
                     {{"input/x", x}, {"output/out", good}});
  ASSERT_EQ(passed.header["ok"], true) << passed.header.dump();
  EXPECT_EQ(passed.header["result"]["passed"], true);
  EXPECT_EQ(passed.header["result"]["seed"], "18446744073709551615");
  EXPECT_EQ(passed.header["result"]["stored"], false);

  auto failed =
      call({{"type", "validate"}, {"op", "relu"}, {"seed", "77"}}, {{"input/x", x}, {"output/out", bad}});
  ASSERT_EQ(failed.header["ok"], true) << failed.header.dump();
  EXPECT_EQ(failed.header["result"]["passed"], false);
  EXPECT_EQ(failed.header["result"]["kind"], "mismatch");
  EXPECT_EQ(failed.header["result"]["stored"], true);

  const auto stored = state_->store().find_failure(77, std::string("relu"));
  ASSERT_TRUE(stored && *stored);
  ASSERT_TRUE((*stored)->record.inputs);
  EXPECT_EQ((*stored)->record.inputs->at("x").data, x.data);

  // The client supplied the values, so a replay must use the snapshot, not the seed.
  const auto config = state_->config(nlohmann::json::object());
  ASSERT_TRUE(config);
  const auto replay = engine::resolve_case(**config, &state_->store(), 77, "", {});
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_TRUE(replay->from_snapshot);
  EXPECT_EQ(replay->c.inputs.at("x").data, x.data);

  const auto listed = call({{"type", "list_failures"}, {"limit", 5}});
  ASSERT_EQ(listed.header["failures"].size(), 1u);
  EXPECT_EQ(listed.header["failures"][0]["seed"], "77");
  const auto result = call({{"type", "get_result"}, {"seed", "18446744073709551615"}});
  EXPECT_EQ(result.header["result"]["passed"], true) << result.header.dump();
  const auto missing = call({{"type", "get_result"}, {"seed", "5"}});
  EXPECT_TRUE(missing.header["result"].is_null());
}

TEST_F(DispatchTest, ClientFailureIsStoredWithItsKindWithoutRunningTheReference) {
  const auto x = tensor::Tensor::from_doubles(tensor::DType::float32, {3}, std::vector<double>{1, 2, 3});
  const auto reply =
      call({{"type", "submit_output"},
            {"op", "relu"},
            {"seed", "9"},
            {"client_failure", {{"kind", "input_mutated"}, {"message", "run_op wrote into x"}}}},
           {{"input/x", x}});
  ASSERT_EQ(reply.header["ok"], true) << reply.header.dump();
  EXPECT_EQ(reply.header["result"]["kind"], "input_mutated");
  EXPECT_EQ(reply.header["result"]["message"], "run_op wrote into x");
  const auto stored = state_->store().find_failure(9, std::string("relu"));
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->record.verdict.kind, check::FailureKind::input_mutated);
}

TEST_F(DispatchTest, TestBatchMatchesTheFuzzCaseStream) {
  const auto reply =
      call({{"type", "get_test_batch"}, {"op", "relu"}, {"seed", "42"}, {"count", 3}, {"start", 2}});
  ASSERT_EQ(reply.header["ok"], true) << reply.header.dump();
  ASSERT_EQ(reply.header["cases"].size(), 3u);
  const auto config = state_->config(nlohmann::json::object());
  ASSERT_TRUE(config);
  const auto& op = *(*config)->find_op("relu");
  for (std::uint64_t i = 0; i < 3; ++i) {
    const auto seed = fuzz::run_case_seed(op, 42, "fuzz", 2 + i, {});  // case 2 is a corner, 3 and 4 random
    const auto expected = fuzz::generate_case(op, seed);
    ASSERT_TRUE(expected);
    EXPECT_EQ(reply.header["cases"][i]["seed"], std::to_string(seed));
    EXPECT_EQ(reply.header["cases"][i]["index"], 2 + i);
    const auto& t = reply.tensors.at("case/" + std::to_string(i) + "/input/x");
    EXPECT_EQ(t.data, expected->inputs.at("x").data);
    EXPECT_EQ(t.strides, expected->inputs.at("x").strides);
  }
}

TEST_F(DispatchTest, OpSchemaReplacesTheConfiguredShapes) {
  const nlohmann::json schema = {
      {"name", "relu"},
      {"dims", {{{"name", "B"}, {"candidates", {3}}}, {{"name", "K"}, {"min", 5}, {"max", 5}}}},
      {"inputs", {{{"name", "x"}, {"dims", {"B", "K", 2}}}}},
      {"output", {{"name", "out"}, {"dims", {"B", "K", 2}}}}};
  const auto reply = call({{"type", "get_test_case"}, {"op", "relu"}, {"seed", "1"}, {"op_schema", schema}});
  ASSERT_EQ(reply.header["ok"], true) << reply.header.dump();
  EXPECT_EQ(reply.tensors.at("case/0/input/x").shape, (tensor::Shape{3, 5, 2}));
  const auto bad = call({{"type", "get_test_case"},
                         {"op", "relu"},
                         {"op_schema", {{"dims", {}}, {"inputs", {{{"name", "x"}, {"dims", {"Q"}}}}}}}});
  expect_error(bad, "bad_request");
}

TEST(RequestTable, LongRunningRequestsAreKnownFromTheHeaderAlone) {
  auto message = [](const char* type) { return encode_message({{"protocol_version", 1}, {"type", type}}); };
  EXPECT_TRUE(is_long_running(bytes_of(message("fuzz"))));
  EXPECT_TRUE(is_long_running(bytes_of(message("minimize"))));
  EXPECT_FALSE(is_long_running(bytes_of(message("ping"))));
  EXPECT_FALSE(is_long_running(bytes_of(message("submit_output"))));
  EXPECT_FALSE(is_long_running(bytes_of(std::string("GEMU"))));
  EXPECT_FALSE(is_long_running(bytes_of(message("fuzz").substr(0, 30))));
}

TEST_F(DispatchTest, ShutdownRefusesLaterWorkButStillAnswersPing) {
  EXPECT_EQ(call({{"type", "shutdown"}}).header["ok"], true);
  expect_error(call({{"type", "list_failures"}}), "shutting_down");
  expect_ping_works();
}

}  // namespace
}  // namespace gpuemu::daemon
