// gh-artifact://NAME baseline store (read-only): the newest non-expired artifact NAME from the
// default branch through the GitHub REST API, its zip fetched from storage without credentials.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "remote/backends/backends.hpp"
#include "remote/redact.hpp"
#include "remote/zip_reader.hpp"

namespace gpuemu::remote {
namespace {

constexpr std::string_view kGitHubAuthHint =
    "set GITHUB_TOKEN to a token with actions: read on the repository (in a workflow: "
    "permissions: actions: read)";
constexpr int kMaxPages = 10;  // 1,000 artifacts of one name is more than any retention keeps

class GhArtifactStore final : public BaselineStore {
 public:
  GhArtifactStore(std::string name, StoreOptions options)
      : name_(std::move(name)), options_(std::move(options)) {
    api_ = options_.env.get("GITHUB_API_URL").value_or("https://api.github.com");
    while (api_.ends_with('/')) api_.pop_back();
  }

  Expected<std::optional<std::string>> get(const std::string& tag) override {
    TRY(check_tag(tag));
    const auto repo = options_.env.get("GITHUB_REPOSITORY");
    if (!repo || repo->find('/') == std::string::npos) {
      return fail(ErrorKind::usage,
                  fmt::format("{} needs GITHUB_REPOSITORY=owner/name (set in GitHub Actions; "
                              "export it when running elsewhere)",
                              describe()));
    }
    repo_ = *repo;
    const auto branch = TRY(default_branch());
    if (!branch) return std::optional<std::string>();
    std::optional<nlohmann::json> newest;
    for (int page = 1; page <= kMaxPages; ++page) {
      const auto listing =
          TRY(api_json(fmt::format("{}/repos/{}/actions/artifacts?name={}&per_page=100&page={}", api_, repo_,
                                   url_encode(name_), page)));
      if (!listing) return std::optional<std::string>();
      const auto& artifacts = listing->value("artifacts", nlohmann::json::array());
      if (!artifacts.is_array())
        return fail(ErrorKind::parse, fmt::format("{}: the artifact listing has no "
                                                  "\"artifacts\" array",
                                                  describe()));
      for (const auto& a : artifacts) {
        if (!a.is_object() || a.value("name", "") != name_ || a.value("expired", true)) continue;
        const auto run = a.value("workflow_run", nlohmann::json::object());
        if (!run.is_object() || run.value("head_branch", "") != *branch) continue;
        if (!newest || a.value("created_at", "") > newest->value("created_at", "")) newest = a;
      }
      if (artifacts.size() < 100) break;
    }
    if (!newest) {
      warn_missing(options_, describe(),
                   fmt::format("no unexpired artifact '{}' from branch '{}' in {}", name_, *branch, repo_));
      return std::optional<std::string>();
    }
    const std::string download = newest->value("archive_download_url", "");
    if (download.empty()) {
      return fail(ErrorKind::parse, fmt::format("{}: artifact {} has no archive_download_url", describe(),
                                                newest->value("id", 0)));
    }
    if (options_.verbose) {
      options_.verbose(fmt::format("{}: artifact {} created {} on {}", describe(), newest->value("id", 0),
                                   newest->value("created_at", "?"), *branch));
    }
    const auto archive = TRY(download_zip(download));
    if (!archive) return std::optional<std::string>();
    // Each entry is capped like a download, all of them together at four downloads; only the
    // picked entry is inflated (docs/baselines.md).
    const ZipLimits limits{options_.limits.max_body_bytes, 4 * options_.limits.max_body_bytes};
    const auto entries = TRY(list_zip(*archive, describe(), limits));
    const ZipEntry* picked = TRY(pick_entry(entries, tag));
    return std::optional<std::string>(TRY(extract_zip_entry(*archive, *picked, describe())));
  }

  Expected<void> put(const std::string&, const std::string&) override {
    return fail(
        ErrorKind::usage,
        fmt::format("cannot push to {}: GitHub's REST API cannot create artifacts. Write the baseline to a "
                    "file (gpuemu baseline export TAG FILE) and upload it in the workflow with "
                    "actions/upload-artifact (name: {}) on the default branch",
                    describe(), name_));
  }

  std::string describe() const override { return "gh-artifact://" + name_; }

 private:
  HttpRequest api_request(const std::string& url) const {
    HttpRequest r;
    r.url = url;
    r.follow_redirects = false;
    r.headers = {"Accept: application/vnd.github+json", "X-GitHub-Api-Version: 2022-11-28"};
    if (const auto token = options_.env.get("GITHUB_TOKEN"))
      r.auth_headers.push_back("Authorization: Bearer " + *token);
    return r;
  }

  // A JSON answer from the API; nullopt after a warning when it was missing or unreachable.
  Expected<std::optional<nlohmann::json>> api_json(const std::string& url) {
    const auto response = TRY(send(api_request(url), options_.limits, options_.retry, options_.verbose));
    const auto body = TRY(interpret_get(response, redact_url(url), options_, kGitHubAuthHint));
    if (!body) return std::optional<nlohmann::json>();
    auto document = nlohmann::json::parse(*body, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
      return fail(ErrorKind::parse,
                  fmt::format("wrong content at {}: the GitHub API answered with something that is "
                              "not a JSON object; check GITHUB_API_URL",
                              redact_url(url)));
    }
    return std::optional<nlohmann::json>(std::move(document));
  }

  Expected<std::optional<std::string>> default_branch() {
    if (!options_.default_branch.empty()) return std::optional<std::string>(options_.default_branch);
    for (const char* name : {"GPUEMU_DEFAULT_BRANCH", "GITHUB_BASE_REF"}) {
      if (auto value = options_.env.get(name)) return value;
    }
    const auto repo = TRY(api_json(fmt::format("{}/repos/{}", api_, repo_)));
    if (!repo) return std::optional<std::string>();
    const std::string branch = repo->value("default_branch", "");
    if (branch.empty()) {
      return fail(ErrorKind::parse,
                  fmt::format("{}: GET /repos/{} has no default_branch; set GPUEMU_DEFAULT_BRANCH",
                              describe(), repo_));
    }
    return std::optional<std::string>(branch);
  }

  // The API answers 302 to blob storage; the second request carries no Authorization header.
  Expected<std::optional<std::string>> download_zip(const std::string& url) {
    const auto first = TRY(send(api_request(url), options_.limits, options_.retry, options_.verbose));
    if (first.status != 301 && first.status != 302 && first.status != 307) {
      return interpret_get(first, redact_url(url), options_, kGitHubAuthHint);
    }
    const auto location = first.header("x-gpuemu-redirect");
    if (!location)
      return fail(ErrorKind::parse, fmt::format("{}: redirect without a Location", redact_url(url)));
    HttpRequest storage;
    storage.url = *location;
    storage.follow_redirects = true;
    const auto second = TRY(send(storage, options_.limits, options_.retry, options_.verbose));
    return interpret_get(second, redact_url(*location), options_,
                         "the artifact storage link expired; try again");
  }

  // TAG.json when the archive has it, else its only .json entry.
  Expected<const ZipEntry*> pick_entry(const std::vector<ZipEntry>& entries, const std::string& tag) {
    std::vector<const ZipEntry*> json;
    for (const auto& e : entries) {
      const std::string base = e.name.substr(e.name.rfind('/') + 1);
      if (base == tag + ".json") return &e;
      if (base.ends_with(".json")) json.push_back(&e);
    }
    if (json.size() == 1) return json.front();
    std::string names;
    for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.name;
    return fail(ErrorKind::parse,
                fmt::format("{}: the artifact holds {} .json files ({}) and none is {}.json; pass "
                            "--tag to pick one or upload a single baseline file",
                            describe(), json.size(), names.empty() ? "empty" : names, tag));
  }

  std::string name_;
  StoreOptions options_;
  std::string api_;
  std::string repo_;
};

}  // namespace

Expected<std::unique_ptr<BaselineStore>> make_gh_artifact_store(const std::string& url,
                                                                const StoreOptions& options) {
  const std::string name = url.substr(url.find("://") + 3);
  if (name.empty() || name.find_first_of("/?#\"") != std::string::npos) {
    return fail(ErrorKind::usage,
                fmt::format("'{}' is not an artifact location: write gh-artifact://NAME with the "
                            "name given to actions/upload-artifact",
                            url));
  }
  return std::unique_ptr<BaselineStore>(std::make_unique<GhArtifactStore>(name, options));
}

}  // namespace gpuemu::remote
