// Tests for backends/s3_store.cpp against tests/servers/s3_server.py, which checks every SigV4
// signature libcurl computes (canonical request, scope, payload hash, session token).
#include <gtest/gtest.h>

#include "remote/baseline_transfer.hpp"
#include "test_servers.hpp"

namespace gpuemu::remote {
namespace {

using testing::Captured;
using testing::RecordingSleeper;

const std::string kS3Document = R"({"schema_version": 1, "tag": "main", "entries": [{"op": "a b"}]})";
const std::string kKey = "AKIDGPUEMUTEST";
const std::string kSecret = "s3cretKeyForTests/+abc";
const std::string kSession = "sessionTokenValue-123";

class S3 : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ =
        testing::python_server("s3_server.py", {"--access-key", kKey, "--secret-key", kSecret,
                                                "--session-token", kSession, "--region", "eu-central-1"});
    port_ = server_->announcement["port"];
  }
  Env env(const std::string& secret = kSecret) const {
    return Env{{{"AWS_ACCESS_KEY_ID", kKey},
                {"AWS_SECRET_ACCESS_KEY", secret},
                {"AWS_SESSION_TOKEN", kSession},
                {"AWS_REGION", "eu-central-1"},
                {"GPUEMU_S3_ENDPOINT", "http://127.0.0.1:" + std::to_string(port_)}}};
  }
  std::unique_ptr<testing::Child> server_;
  int port_ = 0;
};

TEST_F(S3, SignedPushAndPullRoundTrip) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  PushOptions push{testing::test_options(captured, sleeper, env())};
  const auto where = push_baseline("s3://gpuemu-baselines/ci/project", "v1.2", kS3Document, push);
  ASSERT_TRUE(where) << where.error().message << "\n" << testing::get_stats(port_).dump();
  EXPECT_EQ(*where, "s3://gpuemu-baselines/ci/project");

  FetchOptions fetch{testing::test_options(captured, sleeper, env())};
  fetch.tag = "v1.2";
  const auto pulled = fetch_baseline("s3://gpuemu-baselines/ci/project", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_EQ(pulled->bytes, kS3Document);
  const auto stats = testing::get_stats(port_);
  EXPECT_EQ(stats.value("rejected", 0), 0) << stats.dump();
  EXPECT_EQ(stats["requests"], 2);
  // Neither the secret nor the session token is logged.
  EXPECT_EQ(captured.all().find(kSecret), std::string::npos);
  EXPECT_EQ(captured.all().find(kSession), std::string::npos);
}

TEST_F(S3, MissingObjectIsAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper, env())};
  const auto pulled = fetch_baseline("s3://gpuemu-baselines/none", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  EXPECT_EQ(pulled->warnings, std::vector<std::string>{"no baseline at s3://gpuemu-baselines/none/main.json "
                                                       "(http://127.0.0.1:" +
                                                       std::to_string(port_) + "): HTTP 404"});
}

TEST_F(S3, BadSignatureIsRejectedWith403) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  PushOptions push{testing::test_options(captured, sleeper, env("wrong-secret"))};
  const auto pushed = push_baseline("s3://gpuemu-baselines/ci", "main", kS3Document, push);
  ASSERT_FALSE(pushed);
  EXPECT_NE(pushed.error().message.find("was refused with HTTP 403"), std::string::npos)
      << pushed.error().message;
  EXPECT_NE(pushed.error().message.find("SignatureDoesNotMatch"), std::string::npos);
  EXPECT_NE(pushed.error().message.find("check AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_EQ(testing::get_stats(port_)["rejected"], 1);
}

TEST_F(S3, PushWithoutCredentialsSaysWhichVariables) {
  Env no_credentials = env();
  no_credentials.vars.erase("AWS_ACCESS_KEY_ID");
  PushOptions push;
  push.store.env = no_credentials;
  const auto pushed = push_baseline("s3://gpuemu-baselines/ci", "main", kS3Document, push);
  ASSERT_FALSE(pushed);
  EXPECT_NE(pushed.error().message.find("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuemu::remote
