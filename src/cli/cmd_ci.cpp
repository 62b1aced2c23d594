// `gpuemu ci run`: the pre-merge gate. Runs the test cases and a fuzz budget of every op within [ci]
// limits, compares with a baseline, writes result.json and every report rendered from it into --out,
// optionally signs it, and publishes annotations, the job summary and step outputs on GitHub.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "artifact/lint.hpp"
#include "cli/ci_plan.hpp"
#include "cli/command.hpp"
#include "cli/count_check.hpp"
#include "cli/progress.hpp"
#include "cli/remote_flags.hpp"
#include "cli/report_signing.hpp"
#include "cli/result_output.hpp"
#include "cli/seed_options.hpp"
#include "cli/store_access.hpp"
#include "config/policy_pack.hpp"
#include "config/table_reader.hpp"
#include "engine/baseline_document.hpp"
#include "engine/plans.hpp"
#include "github/environment.hpp"
#include "github/publish.hpp"
#include "report/text.hpp"
#include "report/writer.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"
#include "util/read_file.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;

// What makes the exit code 1 (docs/ci.md). The document's `passed` is the same under each.
enum class FailOn { failures, regressions, never };

Expected<FailOn> parse_fail_on(const std::string& text) {
  if (text == "failures") return FailOn::failures;
  if (text == "regressions") return FailOn::regressions;
  if (text == "never") return FailOn::never;
  return fail(
      ErrorKind::usage,
      fmt::format("--fail-on '{}' is not failures, regressions or never (failures: any failing case "
                  "or regression; regressions: only regressions against --baseline; never: report only)",
                  text));
}

Expected<report::JunitFlavor> parse_junit_flavor(const std::string& name) {
  if (name == "standard") return report::JunitFlavor::standard;
  if (name == "strict") return report::JunitFlavor::strict;
  return fail(ErrorKind::usage, fmt::format("--junit-flavor '{}' is not standard (file/line attributes) or "
                                            "strict (Jenkins xUnit)",
                                            name));
}

// A baseline found by --baseline, and where it came from; no document means "no baseline" (a warning).
struct FoundBaseline {
  std::string source;
  std::optional<nlohmann::json> document;
  std::vector<std::string> warnings;
};

bool looks_like_url(const std::string& text) {
  return text.find("://") != std::string::npos;
}

class CiRunCommand final : public Command {
 public:
  void add_options(CLI::App& app) override {
    app.add_flag(
        "--quick", quick_,
        "Only [ci] quick_dtypes and [ci] quick_iterations fuzz cases per op (a fast pre-merge check)");
    app.add_option("--iterations,-n", iterations_,
                   "Fuzz cases per op (default [ci] fuzz_iterations, or quick_iterations with --quick)")
        ->check(count_in_range(0, config::kMaxCasesPerOp));
    app.add_option("--seed", seed_, "Master seed (decimal u64); default [validation] seed, else random");
    app.add_option("--jobs,-j", jobs_, "Parallel jobs (default [ci] parallel_jobs)");
    app.add_option("--shard", shard_,
                   "Run shard I of N (e.g. 2/4) of the cases; join the shards with 'gpuemu report merge'");
    app.add_option("--out", out_,
                   "Directory for result.json, junit.xml, gpuemu.sarif, summary.md, summary.txt")
        ->capture_default_str();
    app.add_option("--baseline", baseline_,
                   "Compare with a baseline: a stored tag, a file from 'baseline export', or a URL "
                   "(file://, http(s)://, s3://, gh-artifact://)");
    app.add_option("--baseline-tag", baseline_tag_, "Tag to fetch when --baseline is a URL")
        ->capture_default_str();
    app.add_option("--fail-on", fail_on_,
                   "What exits 1: failures (any failing case or regression), regressions (only "
                   "regressions against --baseline), never")
        ->capture_default_str();
    app.add_flag("--allow-partial", allow_partial_,
                 "Let a run stopped by [ci] thorough_timeout pass on what it measured (ops that ran no case "
                 "are still reported NOT RUN)");
    app.add_option("--junit-flavor", junit_flavor_,
                   "standard (file/line attributes), or strict for Jenkins xUnit")
        ->capture_default_str();
    app.add_option("--policy", policy_,
                   "Policy pack laid over [policies] and [ci]: default, strict, llm-kernels, or a TOML file "
                   "(docs/policies.md)");
    app.add_option("--sign-key", sign_key_,
                   "Ed25519 private key: also write DIR/REPORT.json, the signed Kernel Correctness Report");
  }

  Expected<ExitCode> run(Context& context) override {
    // A copy: a policy pack replaces [policies] and [ci] keys (and so the config digest) for this run.
    TRY(context.expand_autotune({}));  // every autotune config is a variant of its op, sharded like one
    config::Config config = *TRY(context.config());
    if (!policy_.empty()) TRY(config::apply_policy_pack(config, policy_));
    // Options are checked before any case runs: a typo must not cost a whole fuzz budget.
    const Shard shard = shard_.empty() ? Shard{} : TRY(parse_shard(shard_));
    const FailOn fail_on = TRY(parse_fail_on(fail_on_));
    report::RenderOptions render = render_options(context);
    render.junit_flavor = TRY(parse_junit_flavor(junit_flavor_));
    if (!sign_key_.empty() && !fs::exists(sign_key_)) {
      return fail(ErrorKind::usage, fmt::format("--sign-key '{}' does not exist: pass the gpuemu.key written "
                                                "by 'gpuemu keygen'",
                                                sign_key_));
    }
    const std::uint64_t master = TRY(master_seed(seed_, config));
    for (const auto& line : engine::ops_not_run_here(config)) context.log("gpuemu ci run: " + line);
    auto plan = TRY(plan_ci(config, master, {.quick = quick_, .iterations = iterations_}));
    keep_shard(plan, shard);
    plan.jobs = jobs_ > 0 ? jobs_ : config.ci.parallel_jobs;
    // The gate keeps what it measured when time runs out: the document is then marked partial.
    plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(config.ci.thorough_timeout);
    std::error_code ec;
    fs::create_directories(out_, ec);
    if (ec)
      return fail(ErrorKind::io, fmt::format("cannot create --out directory '{}': {}", out_, ec.message()));

    std::size_t cases = 0;
    for (const auto& op : plan.ops) cases += op.seeds.size();
    context.log(fmt::format("gpuemu ci run: {} op(s), {} case(s), master seed {}{}", plan.ops.size(), cases,
                            master, shard.count > 1 ? ", shard " + shard.label() : std::string()));
    std::optional<store::Store> store;
    std::optional<RunRecorder> recorder;
    if (context.globals.no_store) {
      // --no-store records nothing, but a stored --baseline tag is still read.
      store = TRY(open_existing_store());
    } else {
      store = TRY(open_store());
      recorder = TRY(RunRecorder::start(*store, {plan.command, master, config.digest, config.project.name},
                                        context.globals.verbose));
    }
    auto result = [&] {
      ProgressReporter progress("ci run", context.show_progress());
      return engine::execute(config, plan, recorder ? &*recorder : nullptr, progress.callback());
    }();
    if (!result) return std::unexpected(result.error());
    if (recorder) TRY(recorder->finish(*result));

    result::ResultDocument document = result::make_document(*result);
    result::CiSection ci;
    ci.quick = quick_;
    if (shard.count > 1) ci.shard = shard.label();
    bool regressed = false;
    if (!baseline_.empty()) {
      const auto found = TRY(find_baseline(context, store ? &*store : nullptr));
      ci.baseline = TRY(compare(context, config, found, *result));
      regressed = !ci.baseline->regressions.empty() && config.policies.fail_on_regression;
    }
    bool lint_failed = false;
    // Kernels are linted once per run: by the first shard, so a merge counts each violation once.
    if (!config.kernels.empty() && shard.index == 0) {
      ci.lint = TRY(lint_kernels(context, config, document.warnings));
      lint_failed = !ci.lint["passed"].get<bool>();
    }
    // A partial run checked less than planned: it fails unless the user accepts that (docs/ci.md).
    const bool partial_fails = result->partial && !allow_partial_;
    ci.allow_partial = allow_partial_;
    document.ci = std::move(ci);
    if (regressed || lint_failed || partial_fails) document.passed = false;
    TRY(write_outputs(document, render));
    if (!sign_key_.empty()) {
      const fs::path report_path = fs::path(out_) / "REPORT.json";
      // The signed predicate copies result.json's measured fields as written (src/attest).
      const auto signed_report = TRY(sign_result(result::to_json(document), config, config.root, sign_key_,
                                                 attest::KeyAccess::any, report_path));
      context.log(fmt::format("gpuemu ci run: signed {} with key {} ({} subject(s))", report_path.string(),
                              signed_report.key_id, signed_report.subjects));
    }

    github::Environment env = github::read_environment();
    env.project_root = render.project_root;
    if (env.actions) {
      github::PublishOptions options;
      options.result_path = (fs::path(out_) / "result.json").string();
      TRY(github::publish(document, env, std::cout, options));
    } else {
      std::cout << report::render_text(document);
    }
    std::cout.flush();
    if (result->partial) {
      for (const auto& c : result->cut) {
        context.log(
            fmt::format("gpuemu ci run: CUT {} case {} (seed {}): {}", c.op, c.index, c.seed, c.message));
      }
      for (const auto& op : result->ops) {
        if (result::op_status(op) == result::OpStatus::not_run)
          context.log(
              fmt::format("gpuemu ci run: NOT RUN {}: no case ran before the time budget ran out", op.op));
      }
      context.log(fmt::format(
          "gpuemu ci run: stopped at [ci] thorough_timeout ({} s); the results in {} are partial{}",
          config.ci.thorough_timeout, out_,
          allow_partial_ ? " (accepted by --allow-partial)"
                         : ", so the gate fails: raise thorough_timeout, lower the iterations, or pass "
                           "--allow-partial"));
    }
    context.log(fmt::format("gpuemu ci run: wrote {}/result.json and the reports rendered from it", out_));
    const bool failing = fail_on == FailOn::failures      ? !document.passed
                         : fail_on == FailOn::regressions ? regressed || partial_fails
                                                          : false;
    return failing ? ExitCode::check_failed : ExitCode::ok;
  }

 private:
  // --baseline: a URL goes to the remote store; otherwise a stored tag, then a file.
  Expected<FoundBaseline> find_baseline(Context& context, store::Store* store) {
    FoundBaseline found{.source = baseline_};
    if (looks_like_url(baseline_)) {
      remote::FetchOptions options{RemoteFlags{}.store_options(context)};
      options.tag = baseline_tag_;
      std::optional<attest::PublicKey> key;
      if (const auto path = options.store.env.get("GPUEMU_BASELINE_PUB"); path && !path->empty()) {
        key.emplace(TRY(attest::load_public_key(*path)));
        options.public_key = &*key;
      }
      auto fetched = TRY(remote::fetch_baseline(baseline_, options));
      found.source = fmt::format("{}@{}", fetched.source, baseline_tag_);
      found.warnings = std::move(fetched.warnings);
      if (fetched.document) found.document = std::move(*fetched.document);
      return found;
    }
    if (store) {
      if (auto stored = TRY(store->get_baseline(baseline_))) {
        found.document = stored->document;
        return found;
      }
    }
    if (fs::exists(baseline_)) {
      const std::string text = TRY(util::read_text_file(baseline_, "--baseline"));
      auto document = nlohmann::json::parse(text, nullptr, false);
      if (document.is_discarded()) {
        return fail(ErrorKind::usage, fmt::format("--baseline '{}' is not valid JSON: pass a file written by "
                                                  "'gpuemu baseline export'",
                                                  baseline_));
      }
      found.document = std::move(document);
      return found;
    }
    const std::string warning =
        fmt::format("no baseline '{}' (neither a stored tag nor a file); nothing to compare", baseline_);
    context.log("gpuemu: warning: " + warning);
    found.warnings.push_back(warning);
    return found;
  }

  static Expected<result::BaselineSection> compare(Context& context, const config::Config& config,
                                                   const FoundBaseline& found,
                                                   const result::RunResult& result) {
    if (!found.document)
      return result::BaselineSection{.tag_or_source = found.source, .warnings = found.warnings};
    const auto before = TRY(engine::parse_baseline(*found.document, "baseline '" + found.source + "'"));
    const auto comparison =
        engine::compare_with_baseline(before, engine::baseline_entries(result), config.policies);
    for (const auto& warning : comparison.warnings) context.log("gpuemu: warning: " + warning);
    for (const auto& r : comparison.regressions) {
      context.log(fmt::format("gpuemu: REGRESSION {} [{}]: {}", r.op, r.dtype, r.reason));
    }
    auto section = comparison.to_section(found.source);
    section.warnings.insert(section.warnings.end(), found.warnings.begin(), found.warnings.end());
    return section;
  }

  // ci.lint: every [[kernels]] entry through the artifact checks, as `gpuemu lint --format json`. A
  // kernel whose artifact needs a missing tool (a .cu without nvcc) is skipped with a warning, as on
  // a machine without the CUDA toolkit: the gate's verdict comes from what could run.
  static Expected<nlohmann::json> lint_kernels(Context& context, const config::Config& config,
                                               std::vector<std::string>& warnings) {
    artifact::Linter linter(TRY(artifact::Toolchain::discover()));
    nlohmann::json kernels = nlohmann::json::array();
    bool passed = true;
    for (const auto& kernel : config.kernels) {
      if (const auto missing = artifact::missing_tool_for(linter.tools(), kernel.source)) {
        const auto rel = kernel.source.lexically_relative(config.root);
        const std::string source =
            rel.empty() || rel.string().starts_with("..") ? kernel.source.string() : rel.string();
        kernels.push_back({{"name", kernel.name},
                           {"entry", ""},
                           {"source", source},
                           {"arch", kernel.arch},
                           {"file", source},
                           {"line", 0},
                           {"metrics", nlohmann::json::object()},
                           {"violations", nlohmann::json::array()},
                           {"notes", {*missing}},
                           {"passed", true},
                           {"skipped", *missing}});
        warnings.push_back(fmt::format("kernel '{}': artifact checks skipped: {}", kernel.name, *missing));
        context.log("gpuemu ci run: warning: " + warnings.back());
        continue;
      }
      const auto report = TRY(linter.lint_kernel(kernel));
      kernels.push_back(artifact::report_to_json(report, config.root));
      passed = passed && report.passed();
      context.log(
          fmt::format("gpuemu ci run: lint {}: {} violation(s)", report.name, report.violations.size()));
    }
    return nlohmann::json{{"kernels", std::move(kernels)}, {"passed", passed}};
  }

  // result.json is the source of truth; every other file is rendered from it.
  Expected<void> write_outputs(const result::ResultDocument& document, const report::RenderOptions& options) {
    for (const auto& row : report::writers()) {
      const std::string text = TRY(report::render(document, row.format, options));
      TRY(util::write_file_atomically(fs::path(out_) / row.file_name, text));
    }
    return {};
  }

  bool quick_ = false;
  bool allow_partial_ = false;
  int iterations_ = 0;
  std::string seed_;
  int jobs_ = 0;
  std::string shard_;
  std::string out_ = "gpuemu-out";
  std::string baseline_;
  std::string baseline_tag_ = "main";
  std::string fail_on_ = "failures";
  std::string junit_flavor_ = "standard";
  std::string sign_key_;
  std::string policy_;
};

}  // namespace

std::unique_ptr<Command> make_ci_run_command() {
  return std::make_unique<CiRunCommand>();
}

}  // namespace gpuemu::cli
