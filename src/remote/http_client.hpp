// HTTP requests for the remote baseline stores over libcurl: timeouts, a body size limit,
// retries with exponential backoff and jitter, and redirects followed by hand without credentials.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::remote {

using Milliseconds = std::chrono::milliseconds;

// Waits between retries. The seam lets tests record the delays instead of sleeping them.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void sleep(Milliseconds delay) = 0;
};

class RealSleeper final : public Sleeper {
 public:
  void sleep(Milliseconds delay) override;
};

// When to give up. Attempt i (from 0) waits base * 2^i, capped at max_delay, scaled by a jitter
// factor in [0.5, 1); a Retry-After header replaces that delay, capped at max_retry_after.
struct RetryPolicy {
  int attempts = 4;  // total tries, including the first
  Milliseconds base_delay{500};
  Milliseconds max_delay{8000};
  Milliseconds max_retry_after{60000};
  Sleeper* sleeper = nullptr;      // null: RealSleeper
  std::function<double()> jitter;  // returns [0, 1); null: a random generator
};

struct HttpLimits {
  Milliseconds connect_timeout{10000};
  Milliseconds total_timeout{60000};  // per attempt
  std::size_t max_body_bytes = 64u << 20;
  int max_redirects = 5;
};

// Verbose lines (already redacted) go here; null discards them.
using LogSink = std::function<void(std::string_view)>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;       // "Name: value", sent on every hop
  std::vector<std::string> auth_headers;  // sent to the first URL only, never after a redirect
  std::optional<std::string> body;        // PUT/POST body
  std::string aws_sigv4;                  // CURLOPT_AWS_SIGV4 parameter, e.g. "aws:amz:us-east-1:s3"
  std::string userpwd;                    // with aws_sigv4: "ACCESS_KEY:SECRET_KEY"
  bool follow_redirects = true;
};

// What came back. status 0 means the server was never reached with an answer (connection refused,
// timeout, truncated or broken transfer) after every retry; `transport_error` says why.
struct HttpResponse {
  long status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::string transport_error;
  std::string final_url;  // redacted
  int attempts = 0;

  bool reached() const { return status != 0; }
  std::optional<std::string> header(std::string_view name) const;
};

// Sends `request`, retrying 5xx, 429 and transport errors under `retry`. Errors are kept for what
// retrying cannot fix: a body over the limit, a malformed URL, libcurl failing to start.
Expected<HttpResponse> send(const HttpRequest& request, const HttpLimits& limits, const RetryPolicy& retry,
                            const LogSink& log);

// The delay before retry number `attempt` (0 = the first retry) per `retry`, honouring a
// Retry-After value (seconds or an HTTP date) when one is given.
Milliseconds backoff_delay(const RetryPolicy& retry, int attempt,
                           const std::optional<std::string>& retry_after);

// Percent-encodes everything but RFC 3986 unreserved characters (and '/' when keep_slash).
std::string url_encode(std::string_view text, bool keep_slash = false);

}  // namespace gpuemu::remote
