// `gpuemu calibrate OP`: fits atol/rtol per dtype from a trusted implementation, prints them next
// to the current tolerances, and with --write updates [ops.tolerances] in gpuemu.toml in place.
#include <fmt/format.h>

#include <iostream>
#include <regex>

#include "cli/command.hpp"
#include "engine/calibrate.hpp"
#include "engine/plans.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

class CalibrateCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("op", op_, "The op to calibrate")->required();
    app.add_option("--dtype", dtype_, "Only this dtype");
    app.add_option("--iterations,-n", iterations_, "Cases per dtype (default 50)");
    app.add_option("--against", against_, "Trusted implementation: module:function or a script path "
                                          "(default: the op's own op_script at a known-good revision)");
    app.add_option("--seed", seed_, "Master seed (default [validation] seed, else random)");
    app.add_flag("--write", write_, "Update [ops.tolerances] of the op in gpuemu.toml");
  }

  Expected<ExitCode> run(Context& context) override {
    const config::Config& config = *TRY(context.config());
    const auto selected = TRY(engine::select_ops(config, {op_}));
    if (selected.size() > 1) {
      std::string names;
      for (const auto* o : selected) names += (names.empty() ? "" : ", ") + o->name;
      return fail(ErrorKind::usage, fmt::format("op '{}' has {} implementations ({}); calibrate against one of "
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
    std::optional<std::uint64_t> seed;
    if (!seed_.empty()) seed = TRY(parse_seed(seed_, "--seed"));
    options.master_seed = engine::resolve_master_seed(seed, config);
    context.log(fmt::format("gpuemu calibrate {}: {} cases per dtype, master seed {}", op->name, iterations_,
                            options.master_seed));
    const auto rows = TRY(engine::calibrate(config, *op, options));
    if (write_) {
      TRY(engine::write_tolerances(config.project_file, op->spec.empty() ? op->name : op->spec, rows));
      context.log("gpuemu: updated [ops.tolerances] of '" + op->name + "' in " + config.project_file.string());
    }
    if (context.globals.format == "json") {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& r : rows) {
        list.push_back({{"dtype", tensor::dtype_name(r.dtype)}, {"cases", r.cases}, {"errors", r.errors},
                        {"p95_abs", r.p95_abs}, {"p95_rel", r.p95_rel},
                        {"current", {{"atol", r.current.atol}, {"rtol", r.current.rtol}}},
                        {"fitted", {{"atol", r.fitted.atol}, {"rtol", r.fitted.rtol}}}});
      }
      std::cout << util::dump_json({{"op", op->name}, {"seed", std::to_string(options.master_seed)},
                                    {"written", write_}, {"dtypes", list}})
                << "\n";
    } else {
      std::cout << fmt::format("{:<10} {:>6} {:>7}  {:>10} {:>10}  {:>10} {:>10}\n", "dtype", "cases", "errors",
                               "atol now", "rtol now", "atol fit", "rtol fit");
      for (const auto& r : rows) {
        std::cout << fmt::format("{:<10} {:>6} {:>7}  {:>10.3g} {:>10.3g}  {:>10.3g} {:>10.3g}\n",
                                 tensor::dtype_name(r.dtype), r.cases, r.errors, r.current.atol, r.current.rtol,
                                 r.fitted.atol, r.fitted.rtol);
      }
      if (!write_) std::cout << "(use --write to put the fitted values into " << config.project_file.string() << ")\n";
    }
    for (const auto& r : rows) {
      if (r.cases == 0) {
        return fail(ErrorKind::environment, fmt::format("no {} case ran cleanly; the trusted implementation or the "
                                                        "reference fails (see gpuemu fuzz --dtype {})",
                                                        tensor::dtype_name(r.dtype), tensor::dtype_name(r.dtype)));
      }
    }
    return ExitCode::ok;
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
      return fail(ErrorKind::usage, "--against '" + against_ + "' is neither module:function nor an existing script");
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

std::unique_ptr<Command> make_calibrate_command() { return std::make_unique<CalibrateCommand>(); }

}  // namespace gpuemu::cli
