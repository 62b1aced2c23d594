// Tests for redact.cpp and the small rules in baseline_store.cpp and baseline_transfer.cpp: redacted URLs,
// tag and location rules, the content check, backoff delays and the default-branch push rule.
#include "remote/redact.hpp"

#include <gtest/gtest.h>

#include "remote/baseline_store.hpp"
#include "remote/baseline_transfer.hpp"

namespace gpuemu::remote {
namespace {

TEST(RedactUrl, HidesUserinfoAndEveryQueryValue) {
  EXPECT_EQ(redact_url("https://user:pw@example.com/a/b.json?X-Amz-Signature=abc&X-Amz-Date=1&sig=def#frag"),
            "https://***@example.com/a/b.json?X-Amz-Signature=***&X-Amz-Date=***&sig=***");
  EXPECT_EQ(redact_url("http://127.0.0.1:8080/base/main.json"), "http://127.0.0.1:8080/base/main.json");
  EXPECT_EQ(redact_url("https://h/p?flag&token=t0k"), "https://h/p?flag&token=***");
  EXPECT_EQ(redact_url("https://h/p@x"), "https://h/p@x");  // an '@' in the path is not userinfo
}

TEST(RedactSecret, ReplacesEveryOccurrence) {
  EXPECT_EQ(redact_secret("a s3cr3t b s3cr3t", "s3cr3t"), "a *** b ***");
  EXPECT_EQ(redact_secret("abc", ""), "abc");
}

TEST(Locations, TemplatesPresignedAndAppendedTags) {
  EXPECT_EQ(location_for_tag("https://h/base", "main"), "https://h/base/main.json");
  EXPECT_EQ(location_for_tag("https://h/base/", "main"), "https://h/base/main.json");
  EXPECT_EQ(location_for_tag("https://h/b/{tag}-baseline.json", "v1.2"), "https://h/b/v1.2-baseline.json");
  EXPECT_EQ(location_for_tag("https://h/b/x.json", "main"), "https://h/b/x.json");
  EXPECT_EQ(location_for_tag("https://h/b/obj?X-Amz-Signature=1", "main"),
            "https://h/b/obj?X-Amz-Signature=1");
}

TEST(Tags, OnlyFileSafeNames) {
  EXPECT_TRUE(check_tag("main"));
  EXPECT_TRUE(check_tag("v1.2-rc_3"));
  for (const char* bad : {"", "../x", ".hidden", "a/b", "a b"}) {
    const auto result = check_tag(bad);
    ASSERT_FALSE(result) << bad;
    EXPECT_NE(result.error().message.find("cannot name a file"), std::string::npos);
  }
}

TEST(Content, BaselineNeedsJsonWithSchemaVersion) {
  EXPECT_TRUE(check_baseline_content(R"({"schema_version": 1})", "x"));
  const auto html = check_baseline_content("<html><body>login</body></html>", "https://h/main.json");
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().message,
            "wrong content at https://h/main.json: not a JSON baseline document (31 bytes that look like "
            "HTML or XML, "
            "such as a login or error page); check that the URL points at a file written by gpuemu baseline "
            "export");
  // The content itself is never quoted: a store can hand back any file.
  const auto secret = check_baseline_content("password=hunter2\n", "file:///etc/x.json");
  ASSERT_FALSE(secret);
  EXPECT_EQ(secret.error().message.find("hunter2"), std::string::npos) << secret.error().message;
  EXPECT_NE(secret.error().message.find("(17 bytes of text that is not a JSON object)"), std::string::npos)
      << secret.error().message;
  const auto zeros = check_baseline_content(std::string(10, '\0'), "f");
  ASSERT_FALSE(zeros);
  EXPECT_NE(zeros.error().message.find("(10 bytes of binary data)"), std::string::npos);
  const auto plain = check_baseline_content(R"({"entries": []})", "f");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().message.find("wrong content at f: JSON without a \"schema_version\""),
            std::string::npos);
}

TEST(Backoff, ExponentialCappedWithJitterAndRetryAfter) {
  RetryPolicy retry;
  retry.base_delay = Milliseconds(100);
  retry.max_delay = Milliseconds(1000);
  retry.jitter = [] { return 0.0; };
  EXPECT_EQ(backoff_delay(retry, 0, std::nullopt), Milliseconds(50));
  EXPECT_EQ(backoff_delay(retry, 2, std::nullopt), Milliseconds(200));
  EXPECT_EQ(backoff_delay(retry, 10, std::nullopt), Milliseconds(500));
  retry.jitter = [] { return 0.999; };
  EXPECT_NEAR(static_cast<double>(backoff_delay(retry, 10, std::nullopt).count()), 999.0, 1.0);
  EXPECT_EQ(backoff_delay(retry, 0, std::string("3")), Milliseconds(3000));
  retry.max_retry_after = Milliseconds(2000);
  EXPECT_EQ(backoff_delay(retry, 0, std::string("3600")), Milliseconds(2000));
  EXPECT_EQ(backoff_delay(retry, 0, std::string("Wed, 21 Oct 2015 07:28:00 GMT")), Milliseconds(0));  // past
  EXPECT_EQ(backoff_delay(retry, 1, std::string("soon")), Milliseconds(199));  // unparsable
}

Env env_of(std::map<std::string, std::string, std::less<>> vars) {
  return Env{std::move(vars)};
}

TEST(ShouldPush, OnlyTheDefaultBranchUnlessForced) {
  EXPECT_TRUE(
      should_push(env_of({{"GITHUB_REF", "refs/heads/main"}, {"GITHUB_EVENT_NAME", "push"}}), false).push);
  const auto feature = should_push(env_of({{"GITHUB_REF", "refs/heads/feature"}}), false);
  EXPECT_FALSE(feature.push);
  EXPECT_EQ(
      feature.reason,
      "not pushing: GITHUB_REF is refs/heads/feature, not refs/heads/main; baselines are pushed from the "
      "default branch only (set GPUEMU_DEFAULT_BRANCH if it is not main, or pass --force)");
  EXPECT_TRUE(should_push(env_of({{"GITHUB_REF", "refs/heads/feature"}}), true).push);
  EXPECT_FALSE(
      should_push(env_of({{"GITHUB_REF", "refs/pull/7/merge"}, {"GITHUB_EVENT_NAME", "pull_request"}}), false)
          .push);
  EXPECT_TRUE(
      should_push(env_of({{"GITHUB_REF", "refs/heads/trunk"}, {"GPUEMU_DEFAULT_BRANCH", "trunk"}}), false)
          .push);
  EXPECT_FALSE(
      should_push(env_of({{"GITHUB_REF", "refs/heads/main"}, {"GPUEMU_DEFAULT_BRANCH", "trunk"}}), false)
          .push);
  EXPECT_TRUE(should_push(env_of({{"GITHUB_REF_NAME", "main"}}), false).push);
  EXPECT_TRUE(should_push(env_of({}), false).push);  // outside GitHub Actions
}

TEST(Schemes, UnknownSchemeListsTheKnownOnes) {
  const auto store = open_store("ftp://user:pw@h/x", StoreOptions{});
  ASSERT_FALSE(store);
  EXPECT_EQ(
      store.error().message,
      "baseline location 'ftp://***@h/x' has an unknown scheme 'ftp': use one of file://, http://, https://, "
      "s3://, gh-artifact:// or a local path");
  EXPECT_FALSE(open_store("s3://Bad_Bucket/x", StoreOptions{}));
  EXPECT_FALSE(open_store("gh-artifact://", StoreOptions{}));
  EXPECT_FALSE(open_store("file://relative/path", StoreOptions{}));
}

}  // namespace
}  // namespace gpuemu::remote
