// How a command reaches a remote baseline store (token, S3 region and endpoint, timeouts,
// retries): the options `baseline push|pull` share, and the defaults `ci run --baseline URL` uses.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "remote/baseline_transfer.hpp"

namespace gpuemu::cli {

// Options both commands share: how the store is reached.
struct RemoteFlags {
  std::string token_env = "GPUEMU_BASELINE_TOKEN";
  std::string region;
  std::string endpoint;
  double timeout_secs = 60;
  int retries = 3;

  void add(CLI::App& app) {
    app.add_option("--token-env", token_env,
                   "Environment variable holding the bearer token for http(s) stores")
        ->capture_default_str();
    app.add_option("--region", region, "S3 region (default: $AWS_REGION, else us-east-1)");
    app.add_option("--endpoint", endpoint,
                   "S3 endpoint for path-style requests (default: $GPUEMU_S3_ENDPOINT)");
    app.add_option("--timeout", timeout_secs, "Seconds allowed per request attempt")->capture_default_str();
    app.add_option("--retries", retries, "Retries after 5xx, 429 and connection errors")
        ->capture_default_str();
  }
  remote::StoreOptions store_options(const Context& context) const {
    remote::StoreOptions options;
    options.token_env = token_env;
    options.s3_region = region;
    options.s3_endpoint = endpoint;
    options.limits.total_timeout = remote::Milliseconds(static_cast<long long>(timeout_secs * 1000));
    options.retry.attempts = std::max(0, retries) + 1;
    if (context.globals.verbose) {
      options.verbose = [&context](std::string_view line) { context.log(fmt::format("gpuemu: {}", line)); };
    }
    options.warn = [&context](std::string_view line) {
      context.log(fmt::format("gpuemu: warning: {}", line));
    };
    return options;
  }
};

}  // namespace gpuemu::cli
