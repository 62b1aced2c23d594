// Tests for backends/s3_store.cpp against moto's S3 server with signature checking on (the real
// thing, tests/servers/moto_s3.py), and against tests/servers/s3_server.py for what moto cannot
// check: a session token. The latter checks every signature with its own signer and botocore's.
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

// One moto server for the suite: it takes a few seconds to start, and the tests use distinct keys.
class MotoS3 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = testing::python_server("moto_s3.py", {"--region", "eu-central-1"});
  }
  static void TearDownTestSuite() { server_.reset(); }
  static Env env(std::string secret = "") {
    const auto& a = server_->announcement;
    return Env{{{"AWS_ACCESS_KEY_ID", a["access_key"].get<std::string>()},
                {"AWS_SECRET_ACCESS_KEY", secret.empty() ? a["secret_key"].get<std::string>() : secret},
                {"AWS_REGION", a["region"].get<std::string>()},
                {"GPUEMU_S3_ENDPOINT", "http://127.0.0.1:" + std::to_string(a["port"].get<int>())}}};
  }
  static std::string bucket() { return "s3://" + server_->announcement["bucket"].get<std::string>(); }
  static inline std::unique_ptr<testing::Child> server_;
};

TEST_F(MotoS3, SignedPushAndPullRoundTrip) {
  // Beyond 1 MiB libcurl sends its own "Expect: 100-continue", unsigned: moto must still accept.
  for (const std::string& document : {kS3Document, std::string(R"({"schema_version": 1, "pad": ")") +
                                                       std::string(1536 * 1024, 'x') + "\"}"}) {
    Captured captured;
    RecordingSleeper sleeper(captured);
    PushOptions push{testing::test_options(captured, sleeper, env())};
    const auto where = push_baseline(bucket() + "/ci/project", "v1.2", document, push);
    ASSERT_TRUE(where) << where.error().message;
    EXPECT_EQ(*where, bucket() + "/ci/project");

    FetchOptions fetch{testing::test_options(captured, sleeper, env())};
    fetch.tag = "v1.2";
    const auto pulled = fetch_baseline(bucket() + "/ci/project", fetch);
    ASSERT_TRUE(pulled) << pulled.error().message;
    EXPECT_EQ(pulled->bytes, document);
    EXPECT_EQ(captured.all().find(env().vars.at("AWS_SECRET_ACCESS_KEY")), std::string::npos);
  }
}

TEST_F(MotoS3, WrongSecretIsRefusedBothWays) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  PushOptions push{testing::test_options(captured, sleeper, env("wrong-secret"))};
  const auto pushed = push_baseline(bucket() + "/refused", "main", kS3Document, push);
  ASSERT_FALSE(pushed);
  EXPECT_NE(pushed.error().message.find("was refused with HTTP 403"), std::string::npos)
      << pushed.error().message;
  EXPECT_NE(pushed.error().message.find("SignatureDoesNotMatch"), std::string::npos);
  EXPECT_NE(pushed.error().message.find("check AWS_ACCESS_KEY_ID"), std::string::npos);

  PushOptions good{testing::test_options(captured, sleeper, env())};
  ASSERT_TRUE(push_baseline(bucket() + "/refused", "main", kS3Document, good));
  FetchOptions fetch{testing::test_options(captured, sleeper, env("wrong-secret"))};
  const auto pulled = fetch_baseline(bucket() + "/refused", fetch);
  ASSERT_FALSE(pulled);
  EXPECT_NE(pulled.error().message.find("SignatureDoesNotMatch"), std::string::npos)
      << pulled.error().message;
}

TEST_F(MotoS3, MissingObjectIsAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper, env())};
  const auto pulled = fetch_baseline(bucket() + "/none", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_EQ(pulled->warnings[0], "no baseline at " + bucket() + "/none/main.json (http://127.0.0.1:" +
                                     std::to_string(server_->announcement["port"].get<int>()) +
                                     "): HTTP 404");
}

// The home-made server, for the session token moto's setup cannot issue.
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

TEST_F(S3, SessionTokenIsSignedAndBotocoreAgrees) {
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
  EXPECT_EQ(stats["verified_by_botocore"], 2);
  // Neither the secret nor the session token is logged.
  EXPECT_EQ(captured.all().find(kSecret), std::string::npos);
  EXPECT_EQ(captured.all().find(kSession), std::string::npos);
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
