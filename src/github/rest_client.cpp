// GitHub REST API requests (see rest_client.hpp). Status handling follows GitHub's documented
// answers: 401 bad credentials, 403 missing permission or rate limit (x-ratelimit-remaining: 0,
// or a secondary limit with Retry-After), 404 for what the token cannot see, 422 validation.
#include "github/rest_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

#include "remote/redact.hpp"

namespace gpuemu::github {
namespace {

// Printable text of at most `limit` bytes, on one line.
std::string one_line(std::string_view text, std::size_t limit = 300) {
  std::string out;
  for (const unsigned char c : text.substr(0, limit))
    out.push_back(c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c));
  return out;
}

// GitHub's error answer: {"message": "...", "errors": [{"resource", "field", "code", "message"} or
// "text"], "documentation_url": "..."}; anything else is shown as an excerpt.
std::string server_said(const std::string& body) {
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("message") || !doc["message"].is_string()) {
    return body.empty() ? "" : fmt::format(": \"{}\"", one_line(body, 160));
  }
  std::string text = doc["message"].get<std::string>();
  if (doc.contains("errors") && doc["errors"].is_array()) {
    for (const auto& e : doc["errors"]) {
      if (e.is_string()) {
        text += "; " + e.get<std::string>();
      } else if (e.is_object()) {
        const std::string message = e.value("message", "");
        text += "; " + (message.empty() ? e.value("field", "?") + " " + e.value("code", "invalid") : message);
      }
    }
  }
  return ": " + one_line(text);
}

std::string reset_time(const remote::HttpResponse& response) {
  const auto reset = response.header("x-ratelimit-reset");
  long long epoch = 0;
  if (!reset || std::from_chars(reset->data(), reset->data() + reset->size(), epoch).ec != std::errc()) {
    return "within the hour";
  }
  const std::time_t when = static_cast<std::time_t>(epoch);
  std::tm utc{};
  gmtime_r(&when, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  const long long wait = std::max<long long>(0, epoch - static_cast<long long>(std::time(nullptr)));
  return fmt::format("at {} (in {} min)", text, (wait + 59) / 60);
}

bool rate_limited(const remote::HttpResponse& response) {
  return response.status == 429 ||
         (response.status == 403 &&
          (response.header("x-ratelimit-remaining") == "0" || response.header("retry-after").has_value()));
}

Error status_error(const remote::HttpResponse& response, std::string_view method, const std::string& url,
                   const RestOptions& options) {
  const std::string what = fmt::format("{} {}", method, remote::redact_url(url));
  const std::string said = server_said(response.body);
  std::string message;
  if (!response.reached()) {
    message = fmt::format("{} failed after {} attempt(s): {}; check --api-url ({}) and the network", what,
                          response.attempts, response.transport_error, options.api_url);
  } else if (response.status == 401) {
    message = fmt::format(
        "{}: GitHub refused the token from ${} (HTTP 401{}); check that the variable holds "
        "a valid, unexpired token",
        what, options.token_env, said);
  } else if (rate_limited(response) && response.header("x-ratelimit-remaining") == "0") {
    message = fmt::format(
        "{}: the GitHub API rate limit of this token is used up (HTTP {}{}); it resets {}: "
        "re-run after that",
        what, response.status, said, reset_time(response));
  } else if (rate_limited(response)) {
    message = fmt::format(
        "{}: GitHub's secondary rate limit stopped the request (HTTP {}{}) after {} "
        "attempt(s); wait {} s and re-run",
        what, response.status, said, response.attempts, response.header("retry-after").value_or("60"));
  } else if (response.status == 403) {
    message = fmt::format(
        "{}: GitHub refused the request (HTTP 403{}); the token in ${} needs `permissions: "
        "{}` (on a pull request from a fork GITHUB_TOKEN is read-only: publish from a "
        "workflow_run job, see docs/ci.md)",
        what, said, options.token_env, options.permission);
  } else if (response.status == 404) {
    message = fmt::format(
        "{}: not found (HTTP 404{}); check --repo and --pr, and that the token in ${} can "
        "read the repository (GitHub answers 404 for a private repository a token "
        "cannot see)",
        what, said, options.token_env);
  } else if (response.status == 422) {
    message = fmt::format(
        "{}: GitHub rejected the request (HTTP 422{}); if the pull request changed since "
        "the run, run again on its new head",
        what, said);
  } else if (response.status >= 500) {
    message = fmt::format(
        "{} failed with HTTP {}{} after {} attempt(s); GitHub is having trouble: re-run "
        "later (a re-run edits what this one posted, it does not duplicate it)",
        what, response.status, said, response.attempts);
  } else {
    message = fmt::format("{} failed with HTTP {}{} after {} attempt(s)", what, response.status, said,
                          response.attempts);
  }
  return Error{ErrorKind::environment, remote::redact_secret(std::move(message), options.token)};
}

}  // namespace

RestClient::RestClient(RestOptions options) : options_(std::move(options)) {
  while (options_.api_url.ends_with('/')) options_.api_url.pop_back();
}

Expected<remote::HttpResponse> RestClient::request(std::string_view method, const std::string& url,
                                                   const std::string* body) {
  remote::HttpRequest r;
  r.method = std::string(method);
  r.url = url;
  r.follow_redirects = false;
  r.headers = {"Accept: application/vnd.github+json", fmt::format("X-GitHub-Api-Version: {}", kApiVersion),
               "User-Agent: " + options_.user_agent};
  if (body) {
    r.headers.push_back("Content-Type: application/json");
    r.body = *body;
  }
  r.auth_headers.push_back("Authorization: Bearer " + options_.token);
  if (method != "POST") {
    auto response = send(r, options_.limits, options_.retry, options_.log);
    if (!response)
      return std::unexpected(
          Error{response.error().kind, remote::redact_secret(response.error().message, options_.token)});
    return response;
  }
  // A POST that failed for any other reason may have created something: never repeat it.
  remote::RetryPolicy once = options_.retry;
  const int attempts = std::max(1, options_.retry.attempts);
  once.attempts = 1;
  remote::RealSleeper real;
  remote::Sleeper& sleeper = options_.retry.sleeper ? *options_.retry.sleeper : real;
  for (int attempt = 0;; ++attempt) {
    auto response = send(r, options_.limits, once, options_.log);
    if (!response)
      return std::unexpected(
          Error{response.error().kind, remote::redact_secret(response.error().message, options_.token)});
    response->attempts = attempt + 1;
    if (!rate_limited(*response) || response->header("x-ratelimit-remaining") == "0" ||
        attempt + 1 >= attempts) {
      return response;
    }
    const auto delay = remote::backoff_delay(options_.retry, attempt, response->header("retry-after"));
    if (options_.log) {
      options_.log(fmt::format("POST {}: HTTP {} (rate limited); retry {} of {} in {} ms",
                               remote::redact_url(url), response->status, attempt + 1, attempts - 1,
                               delay.count()));
    }
    sleeper.sleep(delay);
  }
}

Expected<nlohmann::json> RestClient::answer(const remote::HttpResponse& response, std::string_view method,
                                            const std::string& url) {
  if (response.status < 200 || response.status >= 300) {
    return std::unexpected(status_error(response, method, url, options_));
  }
  auto document = nlohmann::json::parse(response.body, nullptr, false);
  if (document.is_discarded()) {
    return fail(ErrorKind::parse,
                fmt::format("{} {}: the answer (HTTP {}) is not JSON; check that --api-url "
                            "({}) is GitHub's REST API",
                            method, remote::redact_url(url), response.status, options_.api_url));
  }
  return document;
}

Expected<nlohmann::json> RestClient::get(const std::string& path) {
  const std::string url = options_.api_url + path;
  return answer(TRY(request("GET", url, nullptr)), "GET", url);
}

Expected<std::vector<nlohmann::json>> RestClient::get_all(const std::string& path, std::string_view what,
                                                          int max_pages) {
  std::vector<nlohmann::json> items;
  std::string url =
      options_.api_url + path + (path.find('?') == std::string::npos ? "?" : "&") + "per_page=100";
  const std::string origin = url_origin(options_.api_url);
  for (int page = 1;; ++page) {
    const auto response = TRY(request("GET", url, nullptr));
    const auto document = TRY(answer(response, "GET", url));
    if (!document.is_array()) {
      return fail(ErrorKind::parse, fmt::format("GET {}: the {} should be a JSON array; check --api-url",
                                                remote::redact_url(url), what));
    }
    items.insert(items.end(), document.begin(), document.end());
    const std::string next = next_link(response.header("link").value_or(""));
    if (next.empty()) return items;
    if (url_origin(next) != origin) {
      return fail(ErrorKind::parse, fmt::format("GET {}: the next page of the {} is on another host ({}); "
                                                "refusing to send the token there",
                                                remote::redact_url(url), what, remote::redact_url(next)));
    }
    if (page == max_pages) {
      return fail(ErrorKind::environment,
                  fmt::format("the {} has more than {} pages of 100; gpuemu stops there", what, max_pages));
    }
    url = next;
  }
}

Expected<nlohmann::json> RestClient::send_json(std::string_view method, const std::string& path,
                                               const nlohmann::json& body) {
  const std::string url = options_.api_url + path;
  const std::string text = body.dump();
  return answer(TRY(request(method, url, &text)), method, url);
}

std::string next_link(std::string_view header) {
  // <url>; rel="next", <url>; rel="last" (RFC 8288); rel may hold several space-separated values.
  std::size_t pos = 0;
  while ((pos = header.find('<', pos)) != std::string_view::npos) {
    const std::size_t close = header.find('>', pos);
    if (close == std::string_view::npos) return "";
    const std::string_view target = header.substr(pos + 1, close - pos - 1);
    const std::size_t end = std::min(header.find('<', close), header.size());
    std::string params(header.substr(close + 1, end - close - 1));
    std::transform(params.begin(), params.end(), params.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const std::size_t rel = params.find("rel=");
    if (rel != std::string::npos) {
      std::string_view value = std::string_view(params).substr(rel + 4);
      if (value.starts_with('"')) {
        value.remove_prefix(1);
        value = value.substr(0, value.find('"'));
      } else {
        value = value.substr(0, value.find_first_of(";, "));
      }
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t space = std::min(value.find(' ', start), value.size());
        if (value.substr(start, space - start) == "next") return std::string(target);
        start = space + 1;
      }
    }
    pos = close + 1;
  }
  return "";
}

std::string url_origin(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  const std::size_t end = std::min(url.find_first_of("/?#", scheme + 3), url.size());
  std::string origin(url.substr(0, end));
  std::transform(origin.begin(), origin.end(), origin.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return origin;
}

}  // namespace gpuemu::github
