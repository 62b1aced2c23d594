// `gpuemu test` and `gpuemu fuzz`: build a case plan, execute it, print the result document.
// Exit 0 when every case passed, 1 when any failed or errored (DESIGN section 4).
#include <fmt/format.h>
#include <thread>

#include "cli/command.hpp"
#include "cli/daemon_access.hpp"
#include "cli/progress.hpp"
#include "cli/result_output.hpp"
#include "cli/seed_options.hpp"
#include "cli/store_access.hpp"
#include "config/table_reader.hpp"
#include "engine/plans.hpp"

namespace gpuemu::cli {
namespace {

// Options test and fuzz share.
class RunCommand : public Command {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("op", positional_ops_, "Op names to run (same as --op)");
    app.add_option("--op", ops_, "Run only this op (repeatable)");
    app.add_option("--seed", seed_, "Master seed (decimal u64); default [validation] seed, else random");
    app.add_option("--dtype", dtype_, "Run only cases of this dtype");
    app.add_option("--jobs,-j", jobs_, "Parallel jobs (default [ci] parallel_jobs)");
    add_specific_options(app);
  }

  Expected<ExitCode> run(Context& context) override {
    std::vector<std::string> names = ops_;
    names.insert(names.end(), positional_ops_.begin(), positional_ops_.end());
    if (!context.globals.daemon) TRY(context.expand_autotune(names));
    const config::Config& config = *TRY(context.config());
    engine::Selection selection;
    selection.ops = names;
    if (!dtype_.empty()) {
      selection.dtype = tensor::parse_dtype(dtype_);
      if (!selection.dtype) {
        return fail(ErrorKind::usage, fmt::format("--dtype '{}' is not a dtype; use one of float32, float16, "
                                                  "bfloat16, float64, int8, int16, int32, int64, uint8, bool",
                                                  dtype_));
      }
    }
    TRY(add_specific_selection(selection));
    const std::uint64_t master = TRY(master_seed(seed_, config));
    if (context.globals.daemon) return run_in_daemon(context, selection.ops, master);
    auto plan = TRY(make_plan(config, selection, master));
    plan.jobs = jobs_ > 0 ? jobs_ : config.ci.parallel_jobs;
    plan.fail_fast = fail_fast_;

    context.log(fmt::format("gpuemu {}: {} op(s), master seed {}", plan.command, plan.ops.size(), master));
    std::optional<store::Store> store;
    std::optional<RunRecorder> recorder;
    if (!context.globals.no_store) {
      store = TRY(open_store());
      recorder = TRY(RunRecorder::start(*store, {plan.command, master, config.digest, config.project.name},
                                        context.globals.verbose));
    }
    auto result = [&] {
      ProgressReporter progress(plan.command, context.show_progress());
      return engine::execute(config, plan, recorder ? &*recorder : nullptr, progress.callback());
    }();
    if (!result) return std::unexpected(result.error());
    if (recorder) {
      TRY(recorder->finish(*result));
      context.log(fmt::format("gpuemu: stored run {} ({} failures) in {}", recorder->run_id(),
                              recorder->stored_failures(), store->file().string()));
    }
    TRY(write_result(context, result::make_document(*result)));
    return result->passed() ? ExitCode::ok : ExitCode::check_failed;
  }

 protected:
  // --daemon: the same run in the running daemon (docs/protocol.md "test", "fuzz"); same output.
  Expected<ExitCode> run_in_daemon(Context& context, const std::vector<std::string>& ops,
                                   std::uint64_t master) {
    nlohmann::json request = {{"ops", ops}, {"seed", std::to_string(master)}, {"fail_fast", fail_fast_}};
    if (!dtype_.empty()) request["dtype"] = dtype_;
    if (jobs_ > 0) request["jobs"] = jobs_;
    add_daemon_fields(request);
    context.log(
        fmt::format("gpuemu {}: through the daemon, master seed {}", request.value("type", ""), master));
    const auto reply = TRY(daemon_request(context, std::move(request)));
    const auto result = TRY(result::from_json(reply.header.at("result"), "the daemon's result"));
    context.log(fmt::format("gpuemu: the daemon stored run {}", reply.header.value("run_id", 0)));
    TRY(write_result(context, result));
    return result.passed ? ExitCode::ok : ExitCode::check_failed;
  }
  virtual void add_daemon_fields(nlohmann::json& request) = 0;
  virtual void add_specific_options(CLI::App& app) = 0;
  virtual Expected<void> add_specific_selection(engine::Selection&) { return {}; }
  virtual Expected<engine::RunPlan> make_plan(const config::Config& config,
                                              const engine::Selection& selection, std::uint64_t master) = 0;

  std::vector<std::string> ops_;
  std::vector<std::string> positional_ops_;
  std::string seed_;
  std::string dtype_;
  int jobs_ = 0;
  bool fail_fast_ = false;
};

class TestCommand final : public RunCommand {
  void add_daemon_fields(nlohmann::json& request) override {
    request["type"] = "test";
    if (cases_ > 0) request["cases"] = cases_;
  }
  void add_specific_options(CLI::App& app) override {
    app.add_option("--cases", cases_, "Cases per op and dtype (default [validation] test_cases)")
        ->check(CLI::Range(std::int64_t{1}, config::kMaxCasesPerOp));
    app.add_flag("--fail-fast", fail_fast_, "Stop at the first failing case");
  }
  Expected<engine::RunPlan> make_plan(const config::Config& config, const engine::Selection& selection,
                                      std::uint64_t master) override {
    return engine::plan_test(config, selection, master, cases_ > 0 ? cases_ : config.validation.test_cases);
  }
  int cases_ = 0;
};

class FuzzCommand final : public RunCommand {
  void add_daemon_fields(nlohmann::json& request) override {
    request["type"] = "fuzz";
    if (iterations_ > 0) request["iterations"] = iterations_;
    if (!values_.empty()) request["values"] = values_;
    if (!layout_.empty()) request["layout"] = layout_;
  }
  void add_specific_options(CLI::App& app) override {
    app.add_option("--iterations,-n", iterations_, "Cases per op (default [validation] fuzz_iterations)")
        ->check(CLI::Range(std::int64_t{0}, config::kMaxCasesPerOp));
    app.add_flag("--fail-fast", fail_fast_, "Stop at the first failing case");
    app.add_option("--values", values_,
                   "Value distribution: regular, boundary, adversarial or mixed (default)");
    app.add_option("--layout", layout_, "Only cases of this memory layout: contiguous, transposed, strided");
  }
  Expected<void> add_specific_selection(engine::Selection& selection) override {
    if (!values_.empty()) {
      selection.values = rng::parse_distribution(values_);
      if (!selection.values) {
        return fail(ErrorKind::usage,
                    fmt::format("--values '{}' is not a distribution; use regular, boundary, "
                                "adversarial or mixed",
                                values_));
      }
    }
    if (!layout_.empty()) {
      selection.layout = tensor::parse_layout(layout_);
      if (!selection.layout) {
        return fail(
            ErrorKind::usage,
            fmt::format("--layout '{}' is not a layout; use contiguous, transposed or strided", layout_));
      }
    }
    return {};
  }
  Expected<engine::RunPlan> make_plan(const config::Config& config, const engine::Selection& selection,
                                      std::uint64_t master) override {
    if (iterations_ < 0) return fail(ErrorKind::usage, "--iterations must be at least 0");
    return engine::plan_fuzz(config, selection, master,
                             iterations_ > 0 ? iterations_ : config.validation.fuzz_iterations);
  }
  int iterations_ = 0;
  std::string values_;
  std::string layout_;
};

}  // namespace

std::unique_ptr<Command> make_test_command() {
  return std::make_unique<TestCommand>();
}
std::unique_ptr<Command> make_fuzz_command() {
  return std::make_unique<FuzzCommand>();
}

}  // namespace gpuemu::cli
