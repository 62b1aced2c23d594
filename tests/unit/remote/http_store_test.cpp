// Tests for backends/http_store.cpp and http_client.cpp against real servers on 127.0.0.1:
// nginx with WebDAV for push/pull, and tests/servers/fault_server.py for injected faults.
#include <gtest/gtest.h>

#include "remote/baseline_transfer.hpp"
#include "remote/redact.hpp"
#include "test_servers.hpp"

namespace gpuemu::remote {
namespace {

using testing::Captured;
using testing::RecordingSleeper;
using testing::TempDir;

const std::string kHttpDocument = R"({"schema_version": 1, "tag": "main", "entries": []})";
const std::string kBearerToken = "tok-9f8e7d6c5b4a";

class FaultServer : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::python_server("fault_server.py");
    port_ = server_->announcement["port"];
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  Expected<BaselineFetch> pull(const std::string& path, Captured& captured, RecordingSleeper& sleeper,
                               HttpLimits limits = {}) {
    FetchOptions fetch{
        testing::test_options(captured, sleeper, Env{{{"GPUEMU_BASELINE_TOKEN", kBearerToken}}})};
    if (limits.total_timeout != HttpLimits{}.total_timeout) fetch.store.limits = limits;
    return fetch_baseline(url(path), fetch);
  }
  std::unique_ptr<testing::Child> server_;
  int port_ = 0;
};

TEST_F(FaultServer, RetriesServerErrorsThenSucceeds) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  const auto pulled = pull("/flaky-2/base", captured, sleeper);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_TRUE(pulled->bytes);
  EXPECT_TRUE(pulled->warnings.empty());
  // Two 500s, two backoffs: base 100 ms doubling, jitter 0 gives half of each.
  EXPECT_EQ(captured.delays, (std::vector<Milliseconds>{Milliseconds(50), Milliseconds(100)}));
  EXPECT_EQ(testing::get_stats(port_)["hits"]["/flaky-2/base/main.json"], 3);
}

TEST_F(FaultServer, ServerErrorsAfterEveryRetryAreAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  const auto pulled = pull("/flaky-10/base", captured, sleeper);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_EQ(pulled->warnings[0],
            "no baseline at " + url("/flaky-10/base/main.json") + ": HTTP 500 after 4 attempt(s)");
  EXPECT_EQ(captured.delays.size(), 3u);
}

TEST_F(FaultServer, HonoursRetryAfterOn429) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  const auto pulled = pull("/ratelimit-7/base", captured, sleeper);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_TRUE(pulled->bytes);
  EXPECT_EQ(captured.delays, std::vector<Milliseconds>{Milliseconds(7000)});
}

TEST_F(FaultServer, SlowBodyPastTheTimeoutIsAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  HttpLimits limits;
  limits.total_timeout = Milliseconds(1200);  // the slow body needs 0.5 s per byte
  const auto start = std::chrono::steady_clock::now();
  const auto pulled = pull("/slow/base", captured, sleeper, limits);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_NE(pulled->warnings[0].find("unreachable after 4 attempt(s): timed out"), std::string::npos)
      << pulled->warnings[0];
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST_F(FaultServer, TruncatedBodyIsRetriedThenAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  const auto pulled = pull("/truncated/base", captured, sleeper);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_NE(pulled->warnings[0].find("truncated body"), std::string::npos) << pulled->warnings[0];
  EXPECT_EQ(testing::get_stats(port_)["hits"]["/truncated/base/main.json"], 4);
}

TEST_F(FaultServer, HtmlInsteadOfJsonIsWrongContent) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  const auto pulled = pull("/html/base", captured, sleeper);
  ASSERT_FALSE(pulled);
  EXPECT_TRUE(pulled.error().message.starts_with("wrong content at " + url("/html/base") +
                                                 ": not a JSON baseline document ("))
      << pulled.error().message;
  EXPECT_NE(pulled.error().message.find("bytes that look like HTML or XML, such as a login or error page"),
            std::string::npos)
      << pulled.error().message;
}

TEST_F(FaultServer, OversizeBodiesAreAbortedWithOrWithoutContentLength) {
  for (const std::string& path : std::vector<std::string>{"/oversize-3000000/base", "/stream-3000000/base"}) {
    Captured captured;
    RecordingSleeper sleeper(captured);
    FetchOptions fetch{testing::test_options(captured, sleeper)};
    fetch.store.limits.max_body_bytes = 1 << 20;
    const auto pulled = fetch_baseline(url(path), fetch);
    ASSERT_FALSE(pulled) << path;
    EXPECT_EQ(pulled.error().message,
              "the answer from " + url(path + "/main.json") +
                  " is larger than the limit of 1048576 bytes; raise the size limit if "
                  "this baseline is really that big");
    EXPECT_TRUE(captured.delays.empty());  // not retried
  }
}

TEST_F(FaultServer, NotFoundIsAWarningAndRefusedCredentialsAnError) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  const auto missing = pull("/ok/base", captured, sleeper);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->warnings,
            std::vector<std::string>{"no baseline at " + url("/ok/base/main.json") + ": HTTP 404"});
  EXPECT_TRUE(captured.delays.empty());
  const auto refused = pull("/status-401/base", captured, sleeper);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "GET " + url("/status-401/base/main.json") +
                                         " was refused with HTTP 401 (server said: \"{\"error\": \"injected "
                                         "status\"}\"); check the token in $GPUEMU_BASELINE_TOKEN (or the "
                                         "presigned URL's expiry)");
}

TEST_F(FaultServer, UnreachableStoreIsAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper)};
  const int closed = testing::free_port();
  const auto pulled = fetch_baseline("http://127.0.0.1:" + std::to_string(closed) + "/b", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_TRUE(pulled->warnings[0].starts_with("no baseline at http://127.0.0.1:" + std::to_string(closed) +
                                              "/b/main.json: unreachable after 4 attempt(s)"))
      << pulled->warnings[0];
}

TEST_F(FaultServer, TokenAndPresignedQueryNeverReachLogsOrMessages) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  PushOptions push{testing::test_options(captured, sleeper, Env{{{"GPUEMU_BASELINE_TOKEN", kBearerToken}}})};
  const std::string presigned = url("/ok/obj/main.json?X-Amz-Signature=presig-5ecret&sig=sas-5ecret");
  ASSERT_TRUE(push_baseline(presigned, "main", kHttpDocument, push));
  ASSERT_TRUE(push_baseline(url("/flaky-1/x"), "main", kHttpDocument, push));
  const auto refused = push_baseline(url("/status-403/x?sig=sas-5ecret"), "main", kHttpDocument, push);
  ASSERT_FALSE(refused);
  FetchOptions fetch{push.store};
  const auto pulled = fetch_baseline(presigned, fetch);
  ASSERT_TRUE(pulled && pulled->bytes);
  // The server did receive the token...
  EXPECT_EQ(testing::get_stats(port_)["authorization"][0], "Bearer " + kBearerToken);
  // ...but no log line, warning or error message carries it or the presigned signatures.
  const std::string text = captured.all() + refused.error().message;
  EXPECT_FALSE(captured.verbose.empty());
  for (const std::string& secret : {kBearerToken, std::string("presig-5ecret"), std::string("sas-5ecret")}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " leaked into:\n" << text;
  }
  EXPECT_NE(text.find("X-Amz-Signature=***&sig=***"), std::string::npos) << text;
}

TEST(Nginx, WebDavPushPullRoundTripAndMissingTag) {
  TempDir dir;
  testing::Nginx nginx(dir.path(), kBearerToken);
  Captured captured;
  RecordingSleeper sleeper(captured);
  const Env env{{{"GPUEMU_BASELINE_TOKEN", kBearerToken}}};
  PushOptions push{testing::test_options(captured, sleeper, env)};
  const auto where = push_baseline(nginx.url() + "/baselines/project", "main", kHttpDocument, push);
  ASSERT_TRUE(where) << where.error().message;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "dav" / "baselines" / "project" / "main.json"));

  FetchOptions fetch{testing::test_options(captured, sleeper, env)};
  const auto pulled = fetch_baseline(nginx.url() + "/baselines/project", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_EQ(pulled->bytes, kHttpDocument);

  fetch.tag = "v2";
  const auto missing = fetch_baseline(nginx.url() + "/baselines/project", fetch);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->bytes);
  EXPECT_EQ(missing->warnings, std::vector<std::string>{"no baseline at " + nginx.url() +
                                                        "/baselines/project/v2.json: HTTP 404"});

  FetchOptions no_token{testing::test_options(captured, sleeper)};
  const auto refused = fetch_baseline(nginx.url() + "/baselines/project", no_token);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("refused with HTTP 401"), std::string::npos);
  EXPECT_NE(refused.error().message.find("set $GPUEMU_BASELINE_TOKEN"), std::string::npos);
}

}  // namespace
}  // namespace gpuemu::remote
