// `gpuemu calibrate OP`: fits atol/rtol per dtype from a trusted implementation, re-checks them on
// fresh cases, prints them next to the current tolerances, and with --write updates
// [ops.tolerances] in gpuemu.toml in place, but only when the re-check passed.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <regex>

#include "cli/command.hpp"
#include "cli/seed_options.hpp"
#include "engine/calibrate.hpp"
#include "engine/plans.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

class CalibrateCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("op", op_, "The op to calibrate")->required();
    app.add_option("--dtype", dtype_, "Only this dtype");
    app.add_option("--iterations,-n", iterations_,
                   "Fit cases per dtype, spread over value kinds and layouts (default 50)");
    app.add_option("--against", against_,
                   "Trusted implementation: module:function or a script path "
                   "(default: the op's own op_script at a known-good revision)");
    app.add_option("--seed", seed_, "Master seed (default [validation] seed, else random)");
    app.add_flag("--write", write_,
                 "Update [ops.tolerances] of the op in gpuemu.toml when the re-check passes");
  }

  Expected<ExitCode> run(Context& context) override {
    const config::Config& config = *TRY(context.config());
    const auto selected = TRY(engine::select_ops(config, {op_}));
    if (selected.size() > 1) {
      std::string names;
      for (const auto* o : selected) names += (names.empty() ? "" : ", ") + o->name;
      return fail(ErrorKind::usage,
                  fmt::format("op '{}' has {} implementations ({}); calibrate against one of "
                              "them, e.g. --op {}",
                              op_, selected.size(), names, selected.front()->name));
    }
    const auto* op = selected.front();
    engine::CalibrateOptions options;
    options.iterations = iterations_;
    if (iterations_ < 2) return fail(ErrorKind::usage, "--iterations must be at least 2 for a percentile");
    if (!dtype_.empty()) {
      options.dtype = tensor::parse_dtype(dtype_);
      if (!options.dtype) return fail(ErrorKind::usage, "--dtype '" + dtype_ + "' is not a dtype");
    }
    if (!against_.empty()) options.against = TRY(parse_against());
    options.master_seed = TRY(master_seed(seed_, config));
    context.log(
        fmt::format("gpuemu calibrate {}: about {} cases per dtype over every value kind and layout, then "
                    "as many fresh ones to re-check, master seed {}",
                    op->name, iterations_, options.master_seed));
    const auto rows = TRY(engine::calibrate(config, *op, options));
    for (const auto& r : rows) {
      if (r.cases == 0) {
        return fail(ErrorKind::environment,
                    fmt::format("no {} case ran cleanly; the trusted implementation or the "
                                "reference fails (see gpuemu fuzz --dtype {})",
                                tensor::dtype_name(r.dtype), tensor::dtype_name(r.dtype)));
      }
    }
    const bool checked =
        std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.check.passed(); });
    const bool written = write_ && checked;
    if (written) {
      TRY(engine::write_tolerances(config.project_file, op->spec.empty() ? op->name : op->spec, rows));
      context.log("gpuemu: updated [ops.tolerances] of '" + op->name + "' in " +
                  config.project_file.string());
    }
    if (context.globals.format == "json") {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& r : rows) list.push_back(engine::to_json(r));
      std::cout << util::dump_json({{"op", op->name},
                                    {"seed", std::to_string(options.master_seed)},
                                    {"written", written},
                                    {"checked", checked},
                                    {"dtypes", list}})
                << "\n";
    } else {
      print_table(rows);
      if (!write_ && checked)
        std::cout << "(use --write to put the fitted values into " << config.project_file.string() << ")\n";
    }
    // Fitted bounds that fail their own re-check would not hold in CI: exit 1, written or not.
    if (!checked) {
      for (const auto& r : rows) {
        if (r.check.passed()) continue;
        context.log(fmt::format("gpuemu: {}{}",
                                write_ ? "not written: " : "re-check FAILED: ", check_failure_text(r)));
      }
      context.log(
          fmt::format("gpuemu: {}raise --iterations so the fit sees more cases (or set the tolerances by "
                      "hand){}",
                      write_ ? config.project_file.string() + " is unchanged; " : "",
                      write_ ? ", then run calibrate --write again" : ""));
      return ExitCode::check_failed;
    }
    return ExitCode::ok;
  }

  static std::string check_failure_text(const engine::CalibrationRow& r) {
    if (r.check.cases == 0) {
      return fmt::format("no {} re-check case ran cleanly ({} errors)", tensor::dtype_name(r.dtype),
                         r.check.errors);
    }
    const auto& worst = *r.check.worst;
    return fmt::format(
        "the fitted {} tolerances (atol {:.3g}, rtol {:.3g}) fail the trusted implementation on {} of {} "
        "fresh cases; worst: seed {} ({} values), {}: {}",
        tensor::dtype_name(r.dtype), r.fitted.atol, r.fitted.rtol, r.check.failed, r.check.cases, worst.seed,
        r.check.worst_stratum, check::failure_kind_name(worst.verdict.kind), worst.verdict.message);
  }

  static void print_table(const std::vector<engine::CalibrationRow>& rows) {
    std::cout << fmt::format("{:<10} {:>6} {:>7}  {:>10} {:>10}  {:>10} {:>10}  {}\n", "dtype", "cases",
                             "errors", "atol now", "rtol now", "atol fit", "rtol fit", "re-check");
    for (const auto& r : rows) {
      const std::string verdict = r.check.passed()
                                      ? fmt::format("{}/{} passed", r.check.cases, r.check.cases)
                                      : fmt::format("FAILED {}/{}", r.check.failed, r.check.cases);
      std::cout << fmt::format("{:<10} {:>6} {:>7}  {:>10.3g} {:>10.3g}  {:>10.3g} {:>10.3g}  {}\n",
                               tensor::dtype_name(r.dtype), r.cases, r.errors, r.current.atol, r.current.rtol,
                               r.fitted.atol, r.fitted.rtol, verdict);
    }
    for (const auto& r : rows) {
      std::cout << fmt::format("  {}: atol from {} values, rtol from {} values", tensor::dtype_name(r.dtype),
                               r.atol_from, r.rtol_from);
      if (!r.check.passed()) std::cout << "; " << check_failure_text(r);
      std::cout << "\n";
    }
  }

  Expected<config::Runnable> parse_against() const {
    config::Runnable r;
    r.spelling = against_;
    static const std::regex callable(R"(^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$)");
    if (std::regex_match(against_, callable)) {
      r.kind = config::Runnable::Kind::callable;
      r.module = against_.substr(0, against_.find(':'));
      r.function = against_.substr(against_.find(':') + 1);
      return r;
    }
    const auto path = std::filesystem::absolute(against_);
    if (!std::filesystem::exists(path)) {
      return fail(ErrorKind::usage,
                  "--against '" + against_ + "' is neither module:function nor an existing script");
    }
    r.kind = config::Runnable::Kind::script;
    r.script = path;
    return r;
  }

  std::string op_;
  std::string dtype_;
  int iterations_ = 50;
  std::string against_;
  std::string seed_;
  bool write_ = false;
};

}  // namespace

std::unique_ptr<Command> make_calibrate_command() {
  return std::make_unique<CalibrateCommand>();
}

}  // namespace gpuemu::cli
