// `gpuemu test` and `gpuemu fuzz`: build a case plan, execute it, print the result document.
// Exit 0 when every case passed, 1 when any failed or errored (DESIGN section 4).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <thread>

#include "cli/ci_plan.hpp"
#include "cli/command.hpp"
#include "cli/count_check.hpp"
#include "cli/daemon_access.hpp"
#include "cli/progress.hpp"
#include "cli/result_output.hpp"
#include "cli/seed_options.hpp"
#include "cli/store_access.hpp"
#include "config/table_reader.hpp"
#include "engine/op_session.hpp"
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
        return fail(ErrorKind::usage, fmt::format("--dtype '{}' is not a dtype; use one of {}", dtype_,
                                                  fmt::join(tensor::all_dtype_names(), ", ")));
      }
    }
    TRY(add_specific_selection(selection));
    if (auto replayed = TRY(run_stored_case(context, selection))) return *replayed;
    const std::uint64_t master = TRY(master_seed(seed_, config));
    if (selection.ops.empty()) {
      for (const auto& line : engine::ops_not_run_here(config))
        context.log(fmt::format("gpuemu {}: {}", name(), line));
    }
    if (context.globals.daemon) {
      TRY(check_daemon_options());
      return run_in_daemon(context, selection.ops, master);
    }
    auto plan = TRY(make_plan(config, selection, master));
    plan.jobs = jobs_ > 0 ? jobs_ : config.ci.parallel_jobs;
    plan.fail_fast = fail_fast_;
    if (bounded_by_thorough_timeout()) engine::bound_by_thorough_timeout(plan, config);

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
    const auto stopped = engine::thorough_timeout_stop(config, plan, *result);
    if (stopped) result->warnings.push_back(*stopped);
    auto document = result::make_document(*result);
    if (stopped) document.passed = false;  // it checked less than planned (docs/configuration.md "[ci]")
    TRY(write_result(context, document));
    log_warnings(context, result->warnings);
    if (stopped && context.globals.format == "text")
      context.log(fmt::format("gpuemu {}: {}", name(), *stopped));
    return document.passed ? ExitCode::ok : ExitCode::check_failed;
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
    log_warnings(context, result.warnings);
    return result.passed ? ExitCode::ok : ExitCode::check_failed;
  }
  // The text document ends with its warnings; other formats get them on stderr as well.
  void log_warnings(const Context& context, const std::vector<std::string>& warnings) const {
    if (context.globals.format == "text") return;
    for (const auto& warning : warnings) context.log(fmt::format("gpuemu {}: warning: {}", name(), warning));
  }
  virtual std::string_view name() const = 0;  // "test" or "fuzz", for messages
  // Whether [ci] thorough_timeout stops this run (test: yes; fuzz is bounded by its iterations).
  virtual bool bounded_by_thorough_timeout() const { return false; }
  virtual Expected<void> check_daemon_options() const { return {}; }
  // `test --seed S` with S a stored failure's case seed replays that case (faq.txt); nullopt = no.
  virtual Expected<std::optional<ExitCode>> run_stored_case(Context&, const engine::Selection&) {
    return std::nullopt;
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
  std::string_view name() const override { return "test"; }
  bool bounded_by_thorough_timeout() const override { return true; }
  void add_daemon_fields(nlohmann::json& request) override {
    request["type"] = "test";
    if (cases_ > 0) request["cases"] = cases_;
  }
  void add_specific_options(CLI::App& app) override {
    app.add_option("--cases", cases_, "Cases per op and dtype (default [validation] test_cases)")
        ->check(count_in_range(1, config::kMaxCasesPerOp));
    app.add_flag("--fail-fast", fail_fast_, "Stop at the first failing case");
    app.add_flag(
        "--quick", quick_,
        "The plan of 'ci run --quick': [ci] quick_dtypes only, with [ci] quick_iterations fuzz cases "
        "per op (the fast check for every push)");
  }
  Expected<engine::RunPlan> make_plan(const config::Config& config, const engine::Selection& selection,
                                      std::uint64_t master) override {
    if (quick_) {
      return plan_ci(config, master,
                     {.quick = true,
                      .test_cases = cases_,
                      .command = "test",
                      .ops = selection.ops,
                      .dtype = selection.dtype});
    }
    return engine::plan_test(config, selection, master, cases_ > 0 ? cases_ : config.validation.test_cases);
  }
  Expected<void> check_daemon_options() const override {
    if (quick_) {
      return fail(ErrorKind::usage,
                  "--quick runs in this process: drop --daemon (or run 'gpuemu test --quick' "
                  "without it)");
    }
    return {};
  }
  // The FAQ's `gpuemu test --seed 98765` after a fuzz run printed "FAIL at seed 98765": that seed is
  // a case seed, so the case runs again as `gpuemu reproduce` runs it. A seed the store does not
  // hold as a failure (of a selected op) keeps its meaning of master seed.
  Expected<std::optional<ExitCode>> run_stored_case(Context& context,
                                                    const engine::Selection& selection) override {
    if (seed_.empty()) return std::nullopt;
    const std::uint64_t seed = TRY(parse_seed(seed_, "--seed"));
    const auto store = TRY(open_existing_store());
    if (!store) return std::nullopt;
    const auto stored = TRY(store->find_failure(seed, std::nullopt));
    if (!stored) return std::nullopt;
    const config::Config& config = *TRY(context.config());
    const config::OpConfig* op = config.find_op(stored->record.op);
    const auto selected = [&](const std::string& name) {
      return std::ranges::find(selection.ops, name) != selection.ops.end();
    };
    if (op == nullptr || (!selection.ops.empty() && !selected(op->name) && !selected(op->spec))) {
      return std::nullopt;
    }
    if (selection.dtype && stored->record.params.dtype != *selection.dtype) return std::nullopt;
    context.log(
        fmt::format("gpuemu test: --seed {} is the case seed of a stored {} failure of op '{}': running "
                    "that case again, as 'gpuemu reproduce {}' does",
                    seed, check::failure_kind_name(stored->record.verdict.kind), op->name, seed));
    const auto resolved = TRY(resolve_loadable_case(context, seed, op->name));
    engine::OpSession session(config, *resolved.op);
    auto record = TRY(session.run_case(resolved.c));
    result::RunResult run;
    run.command = "test";
    run.master_seed = seed;
    run.config_digest = config.digest;
    run.project = config.project.name;
    run.ops.push_back(engine::summarize_op(config, *resolved.op, {record}));
    // One case has one dtype: no empty rows for the op's other dtypes (as the daemon's validate).
    std::erase_if(run.ops.back().dtypes, [](const result::DtypeSummary& d) { return d.total == 0; });
    run.warnings = engine::tolerance_warnings(config, {record});
    TRY(write_result(context, result::make_document(run)));
    log_warnings(context, run.warnings);
    context.log(
        fmt::format("gpuemu test: seed {} {}", seed, record.verdict.passed() ? "passes now" : "still fails"));
    return run.passed() ? ExitCode::ok : ExitCode::check_failed;
  }
  int cases_ = 0;
  bool quick_ = false;
};

class FuzzCommand final : public RunCommand {
  std::string_view name() const override { return "fuzz"; }
  void add_daemon_fields(nlohmann::json& request) override {
    request["type"] = "fuzz";
    if (iterations_ > 0) request["iterations"] = iterations_;
    if (!values_.empty()) request["values"] = values_;
    if (!layout_.empty()) request["layout"] = layout_;
  }
  void add_specific_options(CLI::App& app) override {
    app.add_option("--iterations,-n", iterations_, "Cases per op (default [validation] fuzz_iterations)")
        ->check(count_in_range(0, config::kMaxCasesPerOp));
    app.add_flag("--fail-fast", fail_fast_, "Stop at the first failing case");
    app.add_option("--values", values_,
                   "Value distribution: regular, boundary, adversarial or mixed (default)");
    app.add_option("--layout", layout_,
                   "Only cases of this memory layout: contiguous, transposed, strided, channels_last");
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
            fmt::format("--layout '{}' is not a layout; use contiguous, transposed, strided or channels_last",
                        layout_));
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
