// `gpuemu artifacts baseline store TAG` and `gpuemu artifacts diff TAG`: lint metrics of the
// [[kernels]] kept in the store under a tag, and their growth against [policies] artifact_thresholds.
#include <fmt/format.h>
#include <iostream>

#include "artifact/metrics_diff.hpp"
#include "cli/command.hpp"
#include "store/store.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

std::string value_text(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : "-";
}

void print_diff(const artifact::ArtifactDiff& diff) {
  for (const auto& k : diff.kernels) {
    if (!k.in_baseline) {
      std::cout << fmt::format("NEW  {}: not in baseline '{}'\n", k.kernel, diff.tag);
      continue;
    }
    std::cout << fmt::format("{} {}: {} metric(s) changed\n", k.regressed() ? "FAIL" : "OK  ", k.kernel,
                             k.changed());
    // Only what changed (or regressed: a factor below 1 fails an unchanged value); watched metrics
    // that kept their value are in --format json.
    for (const auto& d : k.deltas) {
      if (!d.changed() && !d.regressed) continue;
      std::string limit = d.threshold ? fmt::format("  (allowed x{:g})", *d.threshold) : "";
      std::cout << fmt::format("  {}{} {} -> {}{}\n", d.regressed ? "REGRESSED " : "", d.metric,
                               value_text(d.baseline), value_text(d.current), limit);
    }
  }
  for (const auto& name : diff.only_in_baseline)
    std::cout << fmt::format("GONE {}: only in the baseline\n", name);
  std::cout << fmt::format("{} regression(s) against '{}'\n", diff.regressions(), diff.tag);
}

class ArtifactsCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.require_subcommand(1);
    baseline_ = app.add_subcommand("baseline", "Artifact baselines in the store");
    baseline_->require_subcommand(1);
    store_ = baseline_->add_subcommand("store", "Lint the [[kernels]] and store their metrics under TAG");
    store_->add_option("tag", tag_, "Baseline tag, e.g. main")->required();
    store_->add_option("--kernel", kernel_, "Only this kernel");
    diff_ = app.add_subcommand("diff", "Compare the [[kernels]]' metrics with the baseline TAG");
    diff_->add_option("tag", tag_, "Baseline tag, e.g. main")->required();
    diff_->add_option("--kernel", kernel_, "Only this kernel");
    for (CLI::App* sub : {baseline_, store_, diff_}) sub->fallthrough();
  }

  Expected<ExitCode> run(Context& context) override {
    const config::Config& config = *TRY(context.config());
    const auto tools = TRY(artifact::Toolchain::discover());
    artifact::Linter linter(tools);
    const auto only = kernel_.empty() ? std::nullopt : std::optional(kernel_);
    const auto reports = TRY(linter.lint_config(config, only));
    const auto db = TRY(store::default_db_path());
    auto store = TRY(store::Store::open(db));
    const bool json = context.globals.format == "json";

    if (store_->parsed()) {
      std::vector<store::ArtifactMetrics> rows;
      for (const artifact::KernelReport& r : reports) {
        store::ArtifactMetrics row;
        row.kernel = r.name;
        row.source = artifact::report_to_json(r, config.root)["source"].get<std::string>();
        row.metrics = artifact::metrics_to_json(r.metrics);
        rows.push_back(std::move(row));
      }
      TRY(store.record_artifact_baseline(tag_, std::move(rows)));
      nlohmann::json names = nlohmann::json::array();
      for (const auto& r : reports) names.push_back(r.name);
      if (json) {
        std::cout << util::dump_json({{"tag", tag_}, {"kernels", names}, {"database", db.string()}}) << "\n";
      } else {
        std::cout << fmt::format("stored the metrics of {} kernel(s) as baseline '{}' in {}\n",
                                 reports.size(), tag_, db.string());
      }
      return ExitCode::ok;
    }
    const auto diff = TRY(artifact::diff_baseline(tag_, TRY(store.artifact_baseline(tag_)), reports,
                                                  config.policies.artifact_thresholds));
    if (!diff.baseline_found) {
      context.log(
          fmt::format("gpuemu: warning: no artifact baseline '{}' in {}; store one with 'gpuemu artifacts "
                      "baseline store {}'",
                      tag_, db.string(), tag_));
    }
    const bool gate = config.policies.fail_on_regression && diff.regressions() > 0;
    if (json) {
      nlohmann::json doc = artifact::diff_to_json(diff);
      doc["passed"] = !gate;
      std::cout << util::dump_json(doc) << "\n";
    } else {
      print_diff(diff);
    }
    return gate ? ExitCode::check_failed : ExitCode::ok;
  }

  CLI::App* baseline_ = nullptr;
  CLI::App* store_ = nullptr;
  CLI::App* diff_ = nullptr;
  std::string tag_;
  std::string kernel_;
};

}  // namespace

std::unique_ptr<Command> make_artifacts_command() {
  return std::make_unique<ArtifactsCommand>();
}

}  // namespace gpuemu::cli
