// s3://bucket/prefix baseline store: objects PREFIX/TAG.json, requests signed with AWS SigV4 by
// libcurl (CURLOPT_AWS_SIGV4), credentials from AWS_* variables, endpoint and region from options.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "remote/backends/backends.hpp"
#include "remote/redact.hpp"
#include "util/hash.hpp"

namespace gpuemu::remote {
namespace {

constexpr std::string_view kS3AuthHint =
    "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials), "
    "the region (AWS_REGION) and the bucket policy";

class S3Store final : public BaselineStore {
 public:
  S3Store(std::string bucket, std::string prefix, StoreOptions options)
      : bucket_(std::move(bucket)), prefix_(std::move(prefix)), options_(std::move(options)) {
    region_ = !options_.s3_region.empty()
                  ? options_.s3_region
                  : options_.env.get("AWS_REGION")
                        .value_or(options_.env.get("AWS_DEFAULT_REGION").value_or("us-east-1"));
    endpoint_ = !options_.s3_endpoint.empty() ? options_.s3_endpoint
                                              : options_.env.get("GPUEMU_S3_ENDPOINT").value_or("");
    while (endpoint_.ends_with('/')) endpoint_.pop_back();
  }

  Expected<std::optional<std::string>> get(const std::string& tag) override {
    TRY(check_tag(tag));
    const auto r = request("GET", tag, std::nullopt);
    const auto response = TRY(send(r, options_.limits, options_.retry, options_.verbose));
    return interpret_get(response, object_name(tag), options_, kS3AuthHint);
  }

  Expected<void> put(const std::string& tag, const std::string& bytes) override {
    TRY(check_tag(tag));
    if (!options_.env.get("AWS_ACCESS_KEY_ID") || !options_.env.get("AWS_SECRET_ACCESS_KEY")) {
      return fail(ErrorKind::usage,
                  fmt::format("cannot push to {}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                              "(and AWS_SESSION_TOKEN for temporary credentials)",
                              object_name(tag)));
    }
    const auto response =
        TRY(send(request("PUT", tag, bytes), options_.limits, options_.retry, options_.verbose));
    return interpret_put(response, object_name(tag), kS3AuthHint);
  }

  std::string describe() const override { return fmt::format("s3://{}/{}", bucket_, prefix_); }

 private:
  std::string key(const std::string& tag) const {
    if (prefix_.ends_with(".json")) return prefix_;
    return prefix_.empty() ? tag + ".json"
                           : (prefix_.ends_with('/') ? prefix_ : prefix_ + "/") + tag + ".json";
  }
  std::string object_name(const std::string& tag) const {
    return fmt::format("s3://{}/{} ({})", bucket_, key(tag),
                       endpoint_.empty() ? "region " + region_ : redact_url(endpoint_));
  }
  // Path style against a configured endpoint; virtual-hosted style against AWS itself.
  std::string url(const std::string& tag) const {
    const std::string path = url_encode(key(tag), /*keep_slash=*/true);
    if (!endpoint_.empty()) return fmt::format("{}/{}/{}", endpoint_, bucket_, path);
    return fmt::format("https://{}.s3.{}.amazonaws.com/{}", bucket_, region_, path);
  }
  HttpRequest request(std::string method, const std::string& tag, std::optional<std::string> body) const {
    HttpRequest r;
    r.method = std::move(method);
    r.url = url(tag);
    r.body = std::move(body);
    r.follow_redirects = false;
    // SigV4 for S3 signs the payload hash; libcurl takes it from this header when present.
    r.auth_headers.push_back("x-amz-content-sha256: " + util::sha256_hex(r.body ? *r.body : std::string()));
    if (r.body) r.headers.push_back("Content-Type: application/json");
    const auto id = options_.env.get("AWS_ACCESS_KEY_ID");
    const auto secret = options_.env.get("AWS_SECRET_ACCESS_KEY");
    if (id && secret) {
      r.aws_sigv4 = fmt::format("aws:amz:{}:s3", region_);
      r.userpwd = *id + ":" + *secret;
      if (const auto session = options_.env.get("AWS_SESSION_TOKEN")) {
        r.auth_headers.push_back("x-amz-security-token: " + *session);
      }
    } else if (options_.verbose) {
      options_.verbose("no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY: sending an unsigned (anonymous) request");
    }
    return r;
  }

  std::string bucket_;
  std::string prefix_;
  StoreOptions options_;
  std::string region_;
  std::string endpoint_;
};

bool valid_bucket(const std::string& bucket) {
  return bucket.size() >= 3 && bucket.size() <= 63 &&
         std::isalnum(static_cast<unsigned char>(bucket.front())) &&
         std::all_of(bucket.begin(), bucket.end(), [](unsigned char c) {
           return std::islower(c) || std::isdigit(c) || c == '.' || c == '-';
         });
}

}  // namespace

Expected<std::unique_ptr<BaselineStore>> make_s3_store(const std::string& url, const StoreOptions& options) {
  const std::string rest = url.substr(url.find("://") + 3);
  const auto slash = rest.find('/');
  const std::string bucket = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
  if (!valid_bucket(bucket) || rest.find('?') != std::string::npos) {
    return fail(ErrorKind::usage,
                fmt::format("'{}' is not an S3 location: write s3://BUCKET/PREFIX with a bucket name "
                            "of 3-63 lowercase letters, digits, '.' and '-'",
                            redact_url(url)));
  }
  return std::unique_ptr<BaselineStore>(std::make_unique<S3Store>(bucket, prefix, options));
}

}  // namespace gpuemu::remote
