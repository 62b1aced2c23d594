// `gpuemu keygen`, `report sign`, `report verify` and `report render`: the signed Kernel
// Correctness Report (docs/signed-report.md, docs/verify.md) on top of the attest library.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "attest/render.hpp"
#include "attest/statement.hpp"
#include "attest/verify.hpp"
#include "cli/command.hpp"
#include "cli/report_signing.hpp"
#include "cli/result_output.hpp"
#include "report/writer.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"
#include "util/read_file.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;

Expected<nlohmann::json> read_json(const fs::path& path, std::string_view what) {
  const std::string text = TRY(util::read_text_file(path, what));
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) {
    return fail(ErrorKind::config, fmt::format("{} '{}' is not valid JSON", what, path.string()));
  }
  return json;
}

class KeygenCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("--out", out_, "Directory for gpuemu.key (mode 0600) and gpuemu.pub")->required();
    app.add_flag("--force", force_, "Replace an existing key pair in that directory");
  }
  Expected<ExitCode> run(Context& context) override {
    auto keys =
        TRY(attest::generate_keys(out_, force_ ? attest::Overwrite::force : attest::Overwrite::refuse));
    context.log(fmt::format("wrote private key {} (mode 0600; keep it secret)", keys.private_key.string()));
    context.log(fmt::format("wrote public key {} (give this to customers)", keys.public_key.string()));
    std::cout << "key id " << keys.key_id << "\n";
    return ExitCode::ok;
  }
  std::string out_;
  bool force_ = false;
};

class SignCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("result", result_, "result.json of a test, fuzz or ci run")->required();
    app.add_option("--key", key_, "Ed25519 private key (gpuemu.key from gpuemu keygen)")->required();
    app.add_option("--out", out_, "Where to write the signed report (REPORT.json)")->required();
    app.add_option("--artifacts-root", root_,
                   "Project root subjects are named relative to (default: the "
                   "directory of gpuemu.toml)");
    app.add_flag("--allow-shared-key", allow_shared_key_,
                 "Use a private key even if group or others may read it (default: refuse, as ssh does)");
  }
  Expected<ExitCode> run(Context& context) override {
    auto result = TRY(read_json(result_, "result file"));
    const config::Config& config = *TRY(context.config());
    fs::path root = root_.empty() ? config.root : fs::path(root_);
    const auto access = allow_shared_key_ ? attest::KeyAccess::any : attest::KeyAccess::owner_only;
    const auto signed_report = TRY(sign_result(result, config, root, key_, access, out_));
    context.log(fmt::format("signed {} with key {}: {} subject(s)", out_, signed_report.key_id,
                            signed_report.subjects));
    return ExitCode::ok;
  }
  std::string result_, key_, out_, root_;
  bool allow_shared_key_ = false;
};

std::string_view status_word(attest::CheckStatus status) {
  switch (status) {
    case attest::CheckStatus::passed:
      return "ok  ";
    case attest::CheckStatus::failed:
      return "FAIL";
    case attest::CheckStatus::skipped:
      return "skip";
  }
  return "";
}

// Verifies `report_path`; a file that is not JSON is an invalid report, not a usage error.
Expected<attest::VerifyReport> verify_file(const fs::path& report_path, const fs::path& pub,
                                           const std::optional<fs::path>& artifacts) {
  auto key = TRY(attest::load_public_key(pub));
  auto envelope = read_json(report_path, "report");
  if (!envelope) {
    if (envelope.error().kind != ErrorKind::config) return std::unexpected(envelope.error());
    attest::VerifyReport report;
    report.checks.push_back({"envelope", attest::CheckStatus::failed, envelope.error().message});
    return report;
  }
  return attest::verify(*envelope, key, artifacts);
}

class VerifyCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("report", report_, "Signed report (REPORT.json)")->required();
    app.add_option("--pub", pub_, "The signer's Ed25519 public key (gpuemu.pub)")->required();
    app.add_option("--artifacts", artifacts_, "Directory holding the subject files, to check their SHA-256");
  }
  Expected<ExitCode> run(Context& context) override {
    std::optional<fs::path> artifacts;
    if (!artifacts_.empty()) artifacts = artifacts_;
    auto report = TRY(verify_file(report_, pub_, artifacts));
    if (context.globals.format == "json") {
      nlohmann::json checks = nlohmann::json::array();
      for (const auto& check : report.checks) {
        checks.push_back({{"name", check.name},
                          {"status", check.status == attest::CheckStatus::passed   ? "passed"
                                     : check.status == attest::CheckStatus::failed ? "failed"
                                                                                   : "skipped"},
                          {"message", check.message}});
      }
      std::cout << util::dump_json({{"valid", report.valid()}, {"checks", checks}}) << "\n";
    } else if (context.globals.format == "text") {
      for (const auto& check : report.checks) {
        std::cout << status_word(check.status) << " " << check.name << ": " << check.message << "\n";
      }
      std::cout << (report.valid() ? "report is valid" : report.status().summary) << "\n";
    } else {
      return fail(ErrorKind::usage, fmt::format("unknown --format '{}' for report verify: use text or json",
                                                context.globals.format));
    }
    return report.valid() ? ExitCode::ok : ExitCode::check_failed;
  }
  std::string report_, pub_, artifacts_;
};

// Renders a signed report (a DSSE envelope) or, through the report writers, a plain result.json.
class RenderCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("document", document_, "A signed REPORT.json, or a result.json")->required();
    app.add_option("--pub", pub_, "Signed reports: verify with this public key and show the outcome");
    app.add_option("--artifacts", artifacts_,
                   "Signed reports: also check the subject files in this directory");
  }
  Expected<ExitCode> run(Context& context) override {
    auto document = TRY(read_json(document_, "report"));
    const std::string& format = context.globals.format;
    if (!attest::is_dsse_envelope(document)) {
      std::cout << TRY(report::render(document, format, render_options(context)));
      return ExitCode::ok;
    }
    if (format != "html" && format != "markdown") {
      return fail(ErrorKind::usage,
                  fmt::format("a signed report renders as --format html or --format markdown, "
                              "not '{}'",
                              format));
    }
    attest::VerifyStatus status;
    if (!pub_.empty()) {
      std::optional<fs::path> artifacts;
      if (!artifacts_.empty()) artifacts = artifacts_;
      status = TRY(verify_file(document_, pub_, artifacts)).status();
    }
    auto kind = format == "html" ? attest::RenderFormat::html : attest::RenderFormat::markdown;
    std::cout << TRY(attest::render_report(document, status, kind));
    return ExitCode::ok;
  }
  std::string document_, pub_, artifacts_;
};

}  // namespace

std::unique_ptr<Command> make_keygen_command() {
  return std::make_unique<KeygenCommand>();
}
std::unique_ptr<Command> make_report_sign_command() {
  return std::make_unique<SignCommand>();
}
std::unique_ptr<Command> make_report_verify_command() {
  return std::make_unique<VerifyCommand>();
}
std::unique_ptr<Command> make_report_render_command() {
  return std::make_unique<RenderCommand>();
}

}  // namespace gpuemu::cli
