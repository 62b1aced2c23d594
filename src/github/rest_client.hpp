// A small client for GitHub's REST API over remote::send (libcurl): the headers GitHub documents,
// JSON bodies, pagination by the Link header, and errors that say what to do about them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "remote/http_client.hpp"
#include "util/error.hpp"

namespace gpuemu::github {

// The API version every request pins with X-GitHub-Api-Version.
inline constexpr std::string_view kApiVersion = "2022-11-28";

struct RestOptions {
  std::string api_url = "https://api.github.com";   // or GitHub Enterprise's https://HOST/api/v3
  std::string token;                                // sent as "Authorization: Bearer", never logged
  std::string token_env = "GITHUB_TOKEN";           // where the token came from, for messages
  std::string permission = "pull-requests: write";  // what the token needs, for messages
  std::string user_agent = "gpuemu";                // GitHub rejects requests without one
  remote::HttpLimits limits;
  remote::RetryPolicy retry;
  remote::LogSink log;  // verbose lines, already redacted
};

// Talks to one API root with one token. GET, PATCH and PUT are retried on 5xx, 429 and connection
// errors (they are idempotent); POST only on rate limiting, where GitHub did not act on it.
class RestClient {
 public:
  explicit RestClient(RestOptions options);

  // GET `path` (from the API root, starting with '/'): the JSON answer.
  Expected<nlohmann::json> get(const std::string& path);
  // Every element of a list endpoint: `path` with per_page=100, then each rel="next" link, up to
  // `max_pages` pages. `what` names the list in errors.
  Expected<std::vector<nlohmann::json>> get_all(const std::string& path, std::string_view what,
                                                int max_pages = 30);
  // POST, PATCH or PUT a JSON body to `path`: the JSON answer.
  Expected<nlohmann::json> send_json(std::string_view method, const std::string& path,
                                     const nlohmann::json& body);

  const std::string& api_url() const { return options_.api_url; }

 private:
  Expected<remote::HttpResponse> request(std::string_view method, const std::string& url,
                                         const std::string* body);
  Expected<nlohmann::json> answer(const remote::HttpResponse& response, std::string_view method,
                                  const std::string& url);

  RestOptions options_;
};

// The target of the rel="next" entry of an RFC 8288 Link header, or "" when there is none.
std::string next_link(std::string_view link_header);

// "scheme://host[:port]" of a URL, lowercased; "" when it has no scheme.
std::string url_origin(std::string_view url);

}  // namespace gpuemu::github
