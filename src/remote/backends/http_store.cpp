// http(s):// baseline store: GET and PUT of TAG.json under a base URL, a {tag} template or a
// presigned URL used as given; a bearer token from the environment variable options name.
#include <fmt/format.h>

#include "remote/backends/backends.hpp"
#include "remote/redact.hpp"

namespace gpuemu::remote {
namespace {

class HttpStore final : public BaselineStore {
 public:
  HttpStore(std::string base, StoreOptions options) : base_(std::move(base)), options_(std::move(options)) {}

  Expected<std::optional<std::string>> get(const std::string& tag) override {
    TRY(check_tag(tag));
    const std::string url = location_for_tag(base_, tag);
    const auto response =
        TRY(send(request("GET", url, std::nullopt), options_.limits, options_.retry, options_.verbose));
    return interpret_get(response, redact_url(url), options_, auth_hint());
  }

  Expected<void> put(const std::string& tag, const std::string& bytes) override {
    TRY(check_tag(tag));
    const std::string url = location_for_tag(base_, tag);
    const auto response =
        TRY(send(request("PUT", url, bytes), options_.limits, options_.retry, options_.verbose));
    return interpret_put(response, redact_url(url), auth_hint());
  }

  std::string describe() const override { return redact_url(base_); }

 private:
  HttpRequest request(std::string method, const std::string& url, std::optional<std::string> body) const {
    HttpRequest r;
    r.method = std::move(method);
    r.url = url;
    r.body = std::move(body);
    r.headers = {"Accept: application/json"};
    if (r.body) r.headers.push_back("Content-Type: application/json");
    if (const auto token = options_.env.get(options_.token_env)) {
      r.auth_headers.push_back("Authorization: Bearer " + *token);
    }
    return r;
  }
  std::string auth_hint() const {
    return options_.env.get(options_.token_env)
               ? fmt::format("check the token in ${} (or the presigned URL's expiry)", options_.token_env)
               : fmt::format("set ${} to a bearer token the store accepts, or use a presigned URL",
                             options_.token_env);
  }
  std::string base_;
  StoreOptions options_;
};

}  // namespace

Expected<std::unique_ptr<BaselineStore>> make_http_store(const std::string& url,
                                                         const StoreOptions& options) {
  const auto host_start = url.find("://") + 3;
  if (host_start >= url.size() || url[host_start] == '/') {
    return fail(ErrorKind::usage, fmt::format("baseline URL '{}' has no host: write e.g. "
                                              "https://artifacts.example.com/baselines",
                                              redact_url(url)));
  }
  return std::unique_ptr<BaselineStore>(std::make_unique<HttpStore>(url, options));
}

}  // namespace gpuemu::remote
