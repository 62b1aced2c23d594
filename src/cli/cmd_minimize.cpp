// `gpuemu minimize SEED`: shrinks a failing case (dims, then values), re-running the real op and
// reference at every step, and stores the minimal case as a new failure linked to the original.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/command.hpp"
#include "cli/progress.hpp"
#include "cli/seed_options.hpp"
#include "cli/store_access.hpp"
#include "engine/minimize.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

nlohmann::json shapes_json(const fuzz::Case& c) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, t] : c.inputs) shapes[name] = t.shape;
  return shapes;
}

std::string shapes_text(const fuzz::Case& c) {
  std::string out;
  for (const auto& [name, t] : c.inputs)
    out += (out.empty() ? "" : " ") + name + tensor::shape_to_string(t.shape);
  return out;
}

class MinimizeCommand final : public Command {
  void add_options(CLI::App& app) override {
    seed_.add_to(app, "Seed of the failing case");
    app.add_option("--op", op_, "The op (needed when the seed is not in the store)");
    app.add_option("--strategy", strategy_, "dims, values or all (default)");
    app.add_option("--max-iters", max_iters_,
                   "At most this many runs of op and reference, the original's included (default 200)");
  }

  Expected<ExitCode> run(Context& context) override {
    // A variant's case ("softmax[BLOCK=64,num_warps=4]") replays with the config it failed with.
    if (!context.globals.daemon)
      TRY(context.expand_autotune(op_.empty() ? std::vector<std::string>{} : std::vector{op_}));
    const config::Config& config = *TRY(context.config());
    const auto seed = TRY(seed_.value("minimize needs a case seed: gpuemu minimize SEED [--op NAME]"));
    engine::MinimizeOptions options;
    const auto strategy = engine::parse_minimize_strategy(strategy_);
    if (!strategy)
      return fail(ErrorKind::usage, "--strategy '" + strategy_ + "' is not one of dims, values, all");
    options.strategy = *strategy;
    if (max_iters_ < 1) return fail(ErrorKind::usage, "--max-iters must be at least 1");
    options.max_iters = max_iters_;
    // A live line on a terminal; in a CI log a plain line every few seconds (progress.hpp).
    std::optional<StatusLine> status;
    if (context.show_progress()) {
      status.emplace(StatusLine::stderr_is_tty());
      options.on_progress = [&](int attempts, const fuzz::Case& best) {
        status->show(fmt::format("minimize: {} runs, smallest so far {}", attempts, shapes_text(best)));
      };
    }

    const auto resolved = TRY(resolve_loadable_case(context, seed, op_));
    engine::OpSession session(config, *resolved.op);
    const auto result = TRY(engine::minimize(session, resolved.c, options));
    status.reset();  // ends the progress line before the result is printed

    std::optional<std::uint64_t> stored_seed;
    if (!context.globals.no_store) {
      auto store = TRY(open_store());
      store::FailureId original_id = 0;
      if (resolved.stored && resolved.stored->record.seed == seed) {
        original_id = resolved.stored->id;
      } else {
        const auto run = TRY(store.begin_run({"minimize", 0, config.digest, config.project.name}));
        original_id = TRY(store.record_failure(run, result.original));
      }
      TRY(store.record_minimized(original_id, result.minimized));
      stored_seed = result.minimized.seed;
    }
    const std::string replay = stored_seed
                                   ? fmt::format("gpuemu reproduce {}", result.minimized.seed)
                                   : fmt::format("gpuemu reproduce {} --op {}", seed, resolved.op->name);
    if (context.globals.format == "json") {
      nlohmann::json doc = {
          {"original", {{"seed", std::to_string(seed)}, {"shapes", shapes_json(resolved.c)}}},
          {"minimized",
           {{"seed", std::to_string(result.minimized.seed)},
            {"shapes", shapes_json(result.minimized_case)},
            {"dims", result.minimized_case.dims},
            {"message", result.minimized.verdict.message}}},
          {"kind", check::failure_kind_name(result.original.verdict.kind)},
          {"stored", stored_seed.has_value()},
          {"replay", replay}};
      doc.update(engine::search_json(result, options));
      std::cout << util::dump_json(doc) << "\n";
    } else {
      std::cout << fmt::format("minimized {} seed {} ({}) in {} steps, {} runs\n", resolved.op->name, seed,
                               check::failure_kind_name(result.original.verdict.kind), result.steps,
                               result.attempts);
      std::cout << "  before: " << shapes_text(resolved.c) << "\n";
      std::cout << "  after:  " << shapes_text(result.minimized_case) << "\n";
      std::cout << "  " << result.minimized.verdict.message << "\n";
      if (result.out_of_budget_in) {
        std::cout << fmt::format(
            "  out of budget: all {} runs used during the {} phase; this is the smallest case found so far "
            "(minimize it again, or raise --max-iters, to shrink it further)\n",
            options.max_iters, engine::minimize_phase_name(*result.out_of_budget_in));
      }
      std::cout << "  replay: " << replay << "\n";
    }
    return ExitCode::ok;
  }

  CaseSeedOption seed_;
  std::string op_;
  std::string strategy_ = "all";
  int max_iters_ = 200;
};

}  // namespace

std::unique_ptr<Command> make_minimize_command() {
  return std::make_unique<MinimizeCommand>();
}

}  // namespace gpuemu::cli
