// `gpuemu ci publish --pr N`: posts a ci run's findings as one pull-request review through the
// GitHub REST API (docs/ci.md "Pull-request review comments"); re-runs update it in place.
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <iostream>

#include "cli/command.hpp"
#include "cli/result_output.hpp"
#include "github/pr_review.hpp"
#include "github/rest_client.hpp"
#include "report/result_document.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

Expected<long long> parse_pr(const std::string& text) {
  long long number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || number <= 0) {
    return fail(ErrorKind::usage,
                fmt::format("--pr '{}' is not a pull request number: give a positive integer, "
                            "in a workflow ${{{{ github.event.pull_request.number }}}}",
                            text));
  }
  return number;
}

bool valid_repo(std::string_view repo) {
  const std::size_t slash = repo.find('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == repo.size()) return false;
  if (repo.find('/', slash + 1) != std::string_view::npos) return false;
  for (const char c : repo) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

class CiPublishCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("--pr", pr_, "Number of the pull request to review")->required();
    app.add_option("--result", result_, "The result.json of `ci run` (or `report merge`)")
        ->capture_default_str();
    app.add_option("--repo", repo_, "OWNER/NAME of the repository (default: $GITHUB_REPOSITORY)");
    app.add_option("--token-env", token_env_,
                   "Environment variable holding a token with pull-requests: write")
        ->capture_default_str();
    app.add_option("--api-url", api_url_,
                   "GitHub REST API root (default: $GITHUB_API_URL, else https://api.github.com)");
    app.add_option("--commit", commit_, "Commit the comments refer to (default: the pull request's head)");
  }

  Expected<ExitCode> run(Context& context) override {
    const long long pr = TRY(parse_pr(pr_));
    const std::string repo = repo_.empty() ? variable("GITHUB_REPOSITORY") : repo_;
    if (repo.empty()) {
      return fail(ErrorKind::usage,
                  "no repository: pass --repo OWNER/NAME (GitHub Actions sets $GITHUB_REPOSITORY)");
    }
    if (!valid_repo(repo)) {
      return fail(ErrorKind::usage,
                  fmt::format("--repo '{}' is not OWNER/NAME (letters, digits, '-', '_', '.')", repo));
    }
    if (!commit_.empty() && (commit_.size() < 7 || commit_.size() > 40 ||
                             commit_.find_first_not_of("0123456789abcdef") != std::string::npos)) {
      return fail(
          ErrorKind::usage,
          fmt::format("--commit '{}' is not a commit sha: give 7 to 40 lowercase hex digits", commit_));
    }
    std::string api_url = api_url_.empty() ? variable("GITHUB_API_URL") : api_url_;
    if (api_url.empty()) api_url = "https://api.github.com";
    if (!api_url.starts_with("https://") && !api_url.starts_with("http://")) {
      return fail(ErrorKind::usage,
                  fmt::format("--api-url '{}' is not an http(s) URL, e.g. https://api.github.com", api_url));
    }
    const auto result = TRY(report::load_result(result_));
    const std::string token = variable(token_env_.c_str());
    if (token.empty()) {
      return fail(
          ErrorKind::environment,
          fmt::format("${} is not set or empty: gpuemu needs a token with `permissions: pull-requests: "
                      "write` to review pull request #{}. In a workflow: `env: {}: ${{{{ "
                      "secrets.GITHUB_TOKEN }}}}` (or pass --token-env NAME)",
                      token_env_, pr, token_env_));
    }

    github::RestOptions rest;
    rest.api_url = api_url;
    rest.token = token;
    rest.token_env = token_env_;
    rest.user_agent = "gpuemu/" GPUEMU_VERSION;
    if (context.globals.verbose) {
      rest.log = [&context](std::string_view line) { context.log(fmt::format("gpuemu: {}", line)); };
    }
    github::RestClient api(std::move(rest));
    github::ReviewOptions options;
    options.repo = repo;
    options.pr = pr;
    options.commit = commit_;
    const report::RenderOptions render = render_options(context);
    options.workspace = render.workspace;
    options.project_root = render.project_root;
    const auto outcome = TRY(github::publish_review(api, result, options));

    if (context.globals.format == "json") {
      std::cout << util::dump_json({{"repo", repo},
                                    {"pr", pr},
                                    {"commit", outcome.commit},
                                    {"findings", outcome.findings},
                                    {"review", outcome.review},
                                    {"review_id", outcome.review_id},
                                    {"review_url", outcome.review_url},
                                    {"follow_up_review", outcome.follow_up},
                                    {"comments_created", outcome.created},
                                    {"comments_updated", outcome.updated},
                                    {"comments_unchanged", outcome.unchanged},
                                    {"comments_retired", outcome.retired},
                                    {"in_review_body", outcome.in_body}})
                << "\n";
    } else {
      std::cout << fmt::format(
          "{}#{}: review {}{}; {} line comment(s) created, {} updated, {} unchanged, {} marked fixed or "
          "moved; "
          "{} finding(s) in the review body\n",
          repo, pr, outcome.review, outcome.review_url.empty() ? "" : " (" + outcome.review_url + ")",
          outcome.created, outcome.updated, outcome.unchanged, outcome.retired, outcome.in_body);
    }
    return ExitCode::ok;
  }

  std::string pr_;
  std::string result_ = "gpuemu-out/result.json";
  std::string repo_;
  std::string token_env_ = "GITHUB_TOKEN";
  std::string api_url_;
  std::string commit_;
};

}  // namespace

std::unique_ptr<Command> make_ci_publish_command() {
  return std::make_unique<CiPublishCommand>();
}

}  // namespace gpuemu::cli
