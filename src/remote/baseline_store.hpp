// Remote baseline stores (docs/baselines.md): one interface with get/put of a baseline
// document's bytes, and the table from URL scheme (file, http(s), s3, gh-artifact) to backend.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remote/http_client.hpp"
#include "util/error.hpp"

namespace gpuemu::remote {

// The environment variables a store reads (tokens, AWS_*, GITHUB_*). A value, not getenv, so
// tests and the CLI can say exactly what a store sees.
struct Env {
  std::map<std::string, std::string, std::less<>> vars;
  static Env process();
  // The value, or nullopt when unset or empty.
  std::optional<std::string> get(std::string_view name) const;
};

// Everything a backend may need; most of it defaults from `env`.
struct StoreOptions {
  Env env = Env::process();
  std::string token_env = "GPUEMU_BASELINE_TOKEN";  // http(s): bearer token from this variable
  std::string s3_region;                            // else AWS_REGION, AWS_DEFAULT_REGION, us-east-1
  std::string s3_endpoint;     // else GPUEMU_S3_ENDPOINT (path style); else AWS virtual-host style
  std::string default_branch;  // gh-artifact: else GPUEMU_DEFAULT_BRANCH, GITHUB_BASE_REF, the API
  HttpLimits limits;
  RetryPolicy retry;
  LogSink verbose;  // redacted request lines
  LogSink warn;     // "no baseline at URL: reason" and other warnings
};

// Moves the bytes of baseline documents to and from one storage location.
class BaselineStore {
 public:
  virtual ~BaselineStore() = default;
  // The document stored under `tag`; nullopt (after a warning through options.warn) when there is
  // none (404, missing file) or the store cannot be reached after every retry.
  virtual Expected<std::optional<std::string>> get(const std::string& tag) = 0;
  virtual Expected<void> put(const std::string& tag, const std::string& bytes) = 0;
  // The location without secrets, for messages.
  virtual std::string describe() const = 0;
};

// Opens the store `url` names by its scheme; a bare path is a file:// location.
// Unknown schemes get an error listing the known ones.
Expected<std::unique_ptr<BaselineStore>> open_store(const std::string& url, const StoreOptions& options);

// The URL schemes open_store knows, in table order ("file", "http", "https", "s3", "gh-artifact").
std::vector<std::string_view> known_schemes();

// A document's location in a URL-like store: a template with {tag} gets the tag substituted;
// a location ending in ".json" or carrying a query (a presigned URL) is used as it is;
// otherwise "/TAG.json" is appended to the path.
std::string location_for_tag(std::string_view base, const std::string& tag);

// Tags name files and objects: letters, digits, '.', '_', '-', not starting with '.'.
Expected<void> check_tag(const std::string& tag);

// Checks that bytes are a baseline document: JSON with a "schema_version" field.
// The error says "wrong content" and names `source`.
Expected<void> check_baseline_content(std::string_view bytes, std::string_view source);

}  // namespace gpuemu::remote
