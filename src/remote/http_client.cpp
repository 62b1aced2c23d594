// libcurl requests for the baseline stores: one easy handle per hop, redirects followed here so
// that credentials never leave the first origin, and the retry loop with backoff and jitter.
#include "remote/http_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "remote/redact.hpp"

namespace gpuemu::remote {
namespace {

struct CurlFree {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct SlistFree {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// What the write and header callbacks fill in during one transfer.
struct Transfer {
  HttpResponse* response = nullptr;
  std::size_t max_body = 0;
  bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (transfer->response->body.size() + n > transfer->max_body) {
    transfer->too_large = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  transfer->response->body.append(data, n);
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    transfer->response->headers.clear();  // a new response (after 100 Continue)
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  transfer->response->headers.emplace_back(std::move(name), std::string(value));
  return n;
}

bool is_transient(CURLcode code) {
  switch (code) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FAILED_INIT:
      return false;
    default:
      return true;
  }
}

std::string describe(CURLcode code, const char* detail) {
  if (code == CURLE_PARTIAL_FILE) return fmt::format("truncated body ({})", detail);
  if (code == CURLE_OPERATION_TIMEDOUT) return fmt::format("timed out ({})", detail);
  return detail[0] != '\0' ? std::string(detail) : std::string(curl_easy_strerror(code));
}

// One request to one URL, no redirects followed.
Expected<HttpResponse> perform(const HttpRequest& request, bool with_auth, const HttpLimits& limits) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<CURL, CurlFree> curl(curl_easy_init());
  if (!curl) return fail(ErrorKind::environment, "libcurl could not start a request (curl_easy_init failed)");
  HttpResponse response;
  Transfer transfer{&response, limits.max_body_bytes};
  char error_buffer[CURL_ERROR_SIZE] = {};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.total_timeout.count()));
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_body_bytes));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "gpuemu");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  std::unique_ptr<curl_slist, SlistFree> headers;
  auto add_header = [&](const std::string& line) {
    headers.reset(curl_slist_append(headers.release(), line.c_str()));
  };
  // "Expect:" (empty) stops libcurl from sending "Expect: 100-continue" and waiting for the answer.
  // Not on a SigV4 request: libcurl (before 8.3, curl #11664) lists every header set here in
  // SignedHeaders, a removed one too, and a server that checks signatures (S3, MinIO) then computes
  // "expect:" into the canonical request and answers 403 SignatureDoesNotMatch to every request.
  // There libcurl may send its own Expect for a large body; it is not signed, and S3 answers it.
  const bool sigv4 = with_auth && !request.aws_sigv4.empty();
  if (!sigv4) add_header("Expect:");
  for (const auto& line : request.headers) add_header(line);
  if (with_auth) {
    for (const auto& line : request.auth_headers) add_header(line);
    if (!request.aws_sigv4.empty()) {
      curl_easy_setopt(h, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
      curl_easy_setopt(h, CURLOPT_USERPWD, request.userpwd.c_str());
    }
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    // The body goes as POSTFIELDS so that libcurl's SigV4 sees it; CUSTOMREQUEST keeps the verb.
    const std::size_t size = request.body ? request.body->size() : 0;
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(size));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body ? request.body->data() : "");
  }
  const CURLcode code = curl_easy_perform(h);
  response.final_url = redact_url(request.url);
  if (code == CURLE_FILESIZE_EXCEEDED || (code == CURLE_WRITE_ERROR && transfer.too_large)) {
    return fail(ErrorKind::io,
                fmt::format("the answer from {} is larger than the limit of {} bytes; raise the "
                            "size limit if this baseline is really that big",
                            response.final_url, limits.max_body_bytes));
  }
  if (code != CURLE_OK) {
    if (!is_transient(code)) {
      return fail(ErrorKind::usage, fmt::format("cannot request {}: {}; check the URL", response.final_url,
                                                describe(code, error_buffer)));
    }
    response.status = 0;
    response.body.clear();
    response.transport_error = describe(code, error_buffer);
    return response;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  if (response.status >= 300 && response.status < 400) {
    char* location = nullptr;
    curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &location);
    if (location) response.headers.emplace_back("x-gpuemu-redirect", location);
  }
  return response;
}

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// One attempt: the request, then any redirects by hand without credentials.
Expected<HttpResponse> perform_following(const HttpRequest& request, const HttpLimits& limits,
                                         const LogSink& log) {
  HttpRequest hop = request;
  for (int redirects = 0;; ++redirects) {
    auto response = TRY(perform(hop, redirects == 0, limits));
    if (log) {
      log(fmt::format("{} {} -> {}", hop.method, redact_url(hop.url),
                      response.reached() ? std::to_string(response.status) : response.transport_error));
    }
    const auto location = response.header("x-gpuemu-redirect");
    if (!request.follow_redirects || !is_redirect(response.status) || !location) return response;
    if (redirects >= limits.max_redirects) {
      return fail(ErrorKind::io, fmt::format("{} redirects more than {} times; check the URL",
                                             redact_url(request.url), limits.max_redirects));
    }
    hop.url = *location;
    hop.auth_headers.clear();
    hop.aws_sigv4.clear();
    hop.userpwd.clear();
    if (response.status == 303 ||
        ((response.status == 301 || response.status == 302) && hop.method != "HEAD")) {
      if (hop.method != "PUT") {
        hop.method = "GET";
        hop.body.reset();
      }
    }
  }
}

}  // namespace

void RealSleeper::sleep(Milliseconds delay) {
  std::this_thread::sleep_for(delay);
}

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

Milliseconds backoff_delay(const RetryPolicy& retry, int attempt,
                           const std::optional<std::string>& retry_after) {
  if (retry_after) {
    long long seconds = -1;
    const std::string& text = *retry_after;
    if (!text.empty() &&
        std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
      seconds = text.size() > 9 ? 1000000000LL : std::stoll(text);
    } else {
      const time_t when = curl_getdate(text.c_str(), nullptr);
      if (when >= 0) seconds = std::max<long long>(0, static_cast<long long>(when - std::time(nullptr)));
    }
    if (seconds >= 0) return std::min<Milliseconds>(Milliseconds(seconds * 1000), retry.max_retry_after);
  }
  double factor = 0.0;
  if (retry.jitter) {
    factor = retry.jitter();
  } else {
    thread_local std::mt19937_64 generator{std::random_device{}()};
    factor = std::uniform_real_distribution<double>(0.0, 1.0)(generator);
  }
  const auto exponential = retry.base_delay.count() * (1LL << std::min(attempt, 20));
  const auto capped = std::min<long long>(exponential, retry.max_delay.count());
  return Milliseconds(static_cast<long long>(static_cast<double>(capped) * (0.5 + 0.5 * factor)));
}

Expected<HttpResponse> send(const HttpRequest& request, const HttpLimits& limits, const RetryPolicy& retry,
                            const LogSink& log) {
  RealSleeper real;
  Sleeper& sleeper = retry.sleeper ? *retry.sleeper : real;
  const int attempts = std::max(1, retry.attempts);
  for (int attempt = 0;; ++attempt) {
    auto response = TRY(perform_following(request, limits, log));
    response.attempts = attempt + 1;
    const bool transient = !response.reached() || response.status >= 500 || response.status == 429;
    if (!transient || attempt + 1 >= attempts) return response;
    const bool may_say_when = response.status == 429 || response.status == 503;
    const auto delay =
        backoff_delay(retry, attempt, may_say_when ? response.header("retry-after") : std::nullopt);
    if (log) {
      log(fmt::format("{} {}: {}; retry {} of {} in {} ms", request.method, redact_url(request.url),
                      response.reached() ? fmt::format("HTTP {}", response.status) : response.transport_error,
                      attempt + 1, attempts - 1, delay.count()));
    }
    sleeper.sleep(delay);
  }
}

std::string url_encode(std::string_view text, bool keep_slash) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.append(fmt::format("%{:02X}", c));
    }
  }
  return out;
}

}  // namespace gpuemu::remote
