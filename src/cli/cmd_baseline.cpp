// `gpuemu baseline store|compare|export|import|list`: named snapshots of a run's per-(op, dtype)
// outcome, and regressions against them under the [policies] thresholds.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/store_access.hpp"
#include "engine/baseline_document.hpp"
#include "result/document.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"
#include "util/read_file.hpp"

namespace gpuemu::cli {
namespace {

Expected<std::pair<store::StoredRun, std::vector<engine::BaselineEntry>>> run_entries(store::Store& store,
                                                                                      std::int64_t run_id) {
  return engine::run_entries(store, run_id);
}

Expected<nlohmann::json> read_json_file(const std::string& path) {
  const std::string text = TRY(util::read_text_file(path, "baseline file"));
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return fail(ErrorKind::usage, "'" + path + "' is not valid JSON");
  return doc;
}

class BaselineStoreCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("tag", tag_, "Name of the baseline, e.g. main or v1.2")->required();
    app.add_option("--run", run_, "Store this run (default: the newest finished run)");
  }
  Expected<ExitCode> run(Context& context) override {
    auto store = TRY(open_store());
    const auto [run, entries] = TRY(run_entries(store, run_));
    TRY(store.store_baseline(
        tag_, engine::make_baseline(tag_, run.info.config_digest, run.info.master_seed, entries)));
    context.log(
        fmt::format("gpuemu: baseline '{}' = run {} ({} op/dtype entries)", tag_, run.id, entries.size()));
    if (context.globals.format == "json") {
      std::cout << util::dump_json({{"tag", tag_}, {"run_id", run.id}, {"entries", entries.size()}}) << "\n";
    }
    return ExitCode::ok;
  }
  std::string tag_;
  std::int64_t run_ = 0;
};

class BaselineCompareCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("tag", tag_, "Baseline tag in the store, or a baseline file exported earlier")->required();
    app.add_option("--run", run_, "Compare this run (default: the newest finished run)");
  }
  Expected<ExitCode> run(Context& context) override {
    const config::Config& config = *TRY(context.config());
    auto store = TRY(open_store());
    nlohmann::json document;
    if (auto stored = TRY(store.get_baseline(tag_))) {
      document = stored->document;
    } else if (std::filesystem::exists(tag_)) {
      document = TRY(read_json_file(tag_));
    } else {
      context.log("gpuemu: warning: no baseline '" + tag_ +
                  "' (neither a stored tag nor a file); nothing to compare");
      if (context.globals.format == "json") {
        std::cout << util::dump_json({{"baseline", nullptr}, {"regressions", nlohmann::json::array()}})
                  << "\n";
      }
      return ExitCode::ok;
    }
    const auto before = TRY(engine::parse_baseline(document, "baseline '" + tag_ + "'"));
    const auto [run, now] = TRY(run_entries(store, run_));
    const auto comparison = engine::compare_with_baseline(before, now, config.policies);
    for (const auto& w : comparison.warnings) context.log("gpuemu: warning: " + w);
    if (context.globals.format == "json") {
      nlohmann::json doc = result::to_json(comparison.to_section(tag_));
      doc["run_id"] = run.id;
      std::cout << util::dump_json(doc) << "\n";
    } else {
      std::cout << fmt::format("run {} against baseline '{}': {} regressions\n", run.id, tag_,
                               comparison.regressions.size());
      for (const auto& r : comparison.regressions)
        std::cout << "  REGRESSION " << r.op << " [" << r.dtype << "]: " << r.reason << "\n";
    }
    const bool failing = !comparison.regressions.empty() && config.policies.fail_on_regression;
    return failing ? ExitCode::check_failed : ExitCode::ok;
  }
  std::string tag_;
  std::int64_t run_ = 0;
};

class BaselineExportCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("tag", tag_, "Stored baseline tag")->required();
    app.add_option("file", file_, "Where to write the document ('-' for stdout)")->required();
  }
  Expected<ExitCode> run(Context& context) override {
    auto store = TRY(open_store());
    const auto stored = TRY(store.get_baseline(tag_));
    if (!stored)
      return fail(ErrorKind::usage,
                  "no baseline '" + tag_ + "' in the store; create it with gpuemu baseline store " + tag_);
    const std::string text = util::dump_json(stored->document);
    if (file_ == "-") {
      std::cout << text << "\n";
      return ExitCode::ok;
    }
    TRY(util::write_file_atomically(file_, text + "\n"));
    context.log("gpuemu: exported baseline '" + tag_ + "' to " + file_);
    return ExitCode::ok;
  }
  std::string tag_;
  std::string file_;
};

class BaselineImportCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("file", file_, "A document written by gpuemu baseline export")->required();
    app.add_option("--tag", tag_, "Store it under this tag (default: the tag inside the document)");
  }
  Expected<ExitCode> run(Context& context) override {
    auto document = TRY(read_json_file(file_));
    TRY(engine::parse_baseline(document, file_));
    const auto inside = document.find("tag");
    const std::string tag = !tag_.empty()                                     ? tag_
                            : inside != document.end() && inside->is_string() ? inside->get<std::string>()
                                                                              : std::string();
    if (tag.empty()) return fail(ErrorKind::usage, file_ + " has no tag inside; pass --tag NAME");
    document["tag"] = tag;
    auto store = TRY(open_store());
    TRY(store.store_baseline(tag, document));
    context.log("gpuemu: imported baseline '" + tag + "' from " + file_);
    return ExitCode::ok;
  }
  std::string file_;
  std::string tag_;
};

class BaselineListCommand final : public Command {
  void add_options(CLI::App&) override {}
  Expected<ExitCode> run(Context& context) override {
    auto store = TRY(open_store());
    const auto list = TRY(store.list_baselines());
    if (context.globals.format == "json") {
      nlohmann::json tags = nlohmann::json::array();
      for (const auto& b : list) tags.push_back({{"tag", b.tag}, {"created_ms", b.created_at}});
      std::cout << util::dump_json({{"baselines", tags}}) << "\n";
    } else {
      for (const auto& b : list) std::cout << b.tag << "\n";
    }
    return ExitCode::ok;
  }
};

}  // namespace

std::unique_ptr<Command> make_baseline_store_command() {
  return std::make_unique<BaselineStoreCommand>();
}
std::unique_ptr<Command> make_baseline_compare_command() {
  return std::make_unique<BaselineCompareCommand>();
}
std::unique_ptr<Command> make_baseline_export_command() {
  return std::make_unique<BaselineExportCommand>();
}
std::unique_ptr<Command> make_baseline_import_command() {
  return std::make_unique<BaselineImportCommand>();
}
std::unique_ptr<Command> make_baseline_list_command() {
  return std::make_unique<BaselineListCommand>();
}

}  // namespace gpuemu::cli
