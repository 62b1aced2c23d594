// `gpuemu baseline push|pull`: baseline documents to and from artifact storage (docs/baselines.md)
// through remote::push_baseline and remote::fetch_baseline; a missing baseline is only a warning.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "attest/keys.hpp"
#include "cli/command.hpp"
#include "cli/remote_flags.hpp"
#include "cli/store_access.hpp"
#include "remote/baseline_transfer.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"
#include "util/read_file.hpp"

namespace gpuemu::cli {
namespace {

// A key path from the option, else from the environment variable; empty when neither is set.
std::string key_path(const std::string& option, const remote::Env& env, const char* variable) {
  return !option.empty() ? option : env.get(variable).value_or("");
}

class BaselinePushCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("tag", tag_, "Baseline tag to push (from the store, or the --file document)")->required();
    app.add_option("url", url_, "Where: a path, file://, http(s)://, s3://BUCKET/PREFIX")->required();
    app.add_flag("--force", force_, "Push even when not running on the default branch");
    app.add_option("--file", file_, "Push this baseline document instead of the stored tag");
    app.add_option("--sign-key", sign_key_,
                   "Ed25519 private key to sign with (default: $GPUEMU_BASELINE_SIGN_KEY)");
    flags_.add(app);
  }
  Expected<ExitCode> run(Context& context) override {
    auto options = remote::PushOptions{flags_.store_options(context)};
    const auto decision = remote::should_push(options.store.env, force_);
    context.log("gpuemu: " + decision.reason);
    if (!decision.push) {
      if (context.globals.format == "json") {
        std::cout << util::dump_json({{"pushed", false}, {"reason", decision.reason}}) << "\n";
      }
      return ExitCode::ok;
    }
    std::string bytes;
    if (!file_.empty()) {
      bytes = TRY(util::read_text_file(file_, "--file"));
    } else {
      auto store = TRY(open_store());
      const auto stored = TRY(store.get_baseline(tag_));
      if (!stored) {
        return fail(ErrorKind::usage,
                    fmt::format("no baseline '{}' in the store; create it with gpuemu baseline "
                                "store {} or push a document with --file",
                                tag_, tag_));
      }
      bytes = util::dump_json(stored->document) + "\n";
    }
    std::optional<attest::PrivateKey> key;
    if (const auto path = key_path(sign_key_, options.store.env, "GPUEMU_BASELINE_SIGN_KEY"); !path.empty()) {
      // Keys here often come from CI secrets written with the default umask: any mode is accepted.
      key.emplace(TRY(attest::load_private_key(path, attest::KeyAccess::any)));
      options.sign_key = &*key;
    }
    const auto where = TRY(remote::push_baseline(url_, tag_, bytes, options));
    const std::string signed_note = key ? fmt::format(", signed by key {}", key->key_id()) : std::string();
    context.log(fmt::format("gpuemu: pushed baseline '{}' to {}{}", tag_, where, signed_note));
    if (context.globals.format == "json") {
      nlohmann::json doc = {{"pushed", true}, {"tag", tag_}, {"location", where}};
      if (key) doc["key_id"] = key->key_id();
      std::cout << util::dump_json(doc) << "\n";
    }
    return ExitCode::ok;
  }
  std::string tag_;
  std::string url_;
  bool force_ = false;
  std::string file_;
  std::string sign_key_;
  RemoteFlags flags_;
};

class BaselinePullCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("url", url_, "Where: a path, file://, http(s)://, s3://BUCKET/PREFIX, gh-artifact://NAME")
        ->required();
    app.add_option("--tag", tag_, "Baseline tag to fetch")->capture_default_str();
    app.add_option("--out", out_, "Write the document here (default: stdout)");
    app.add_option("--pub", pub_,
                   "Ed25519 public key; unsigned or badly signed baselines are then ignored "
                   "(default: $GPUEMU_BASELINE_PUB)");
    flags_.add(app);
  }
  Expected<ExitCode> run(Context& context) override {
    remote::FetchOptions options{flags_.store_options(context)};
    options.tag = tag_;
    std::optional<attest::PublicKey> key;
    if (const auto path = key_path(pub_, options.store.env, "GPUEMU_BASELINE_PUB"); !path.empty()) {
      key.emplace(TRY(attest::load_public_key(path)));
      options.public_key = &*key;
    }
    const auto fetched = TRY(remote::fetch_baseline(url_, options));
    if (fetched.bytes) {
      const std::string signed_note = fetched.signed_by
                                          ? fmt::format(" (signature verified, key {})", *fetched.signed_by)
                                          : std::string();
      if (!out_.empty() && out_ != "-") {
        TRY(util::write_file_atomically(out_, *fetched.bytes));
        context.log(fmt::format("gpuemu: pulled baseline '{}' from {} to {}{}", tag_, fetched.source, out_,
                                signed_note));
      } else {
        std::cout << *fetched.bytes;
        if (!fetched.bytes->ends_with('\n')) std::cout << "\n";
        context.log(fmt::format("gpuemu: pulled baseline '{}' from {}{}", tag_, fetched.source, signed_note));
      }
    }
    return ExitCode::ok;
  }
  std::string url_;
  std::string tag_ = "main";
  std::string out_;
  std::string pub_;
  RemoteFlags flags_;
};

}  // namespace

std::unique_ptr<Command> make_baseline_push_command() {
  return std::make_unique<BaselinePushCommand>();
}
std::unique_ptr<Command> make_baseline_pull_command() {
  return std::make_unique<BaselinePullCommand>();
}

}  // namespace gpuemu::cli
