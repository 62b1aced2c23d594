// Plan builders for test and fuzz (see plans.hpp). Case seeds come from fuzz::case_seed, so a
// plan is a pure function of (config, selection, master seed, count).
#include "engine/plans.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <random>

#include "config/default_shapes.hpp"
#include "fuzz/corners.hpp"
#include "util/suggest.hpp"

namespace gpuemu::engine {
namespace {

bool runnable_here(const config::OpConfig& op) {
  return !op.op_script.empty() && !op.reference.empty();
}

// Why the CLI leaves `op` out: a client runs it (the config requires an op under test otherwise).
std::string client_runs_text(const config::OpConfig& op) {
  const bool orchestrated = op.execution_mode == config::ExecutionMode::daemon_orchestrated;
  return fmt::format(
      "op '{}' is not run here: execution_mode '{}' without op_script or module means a client "
      "runs it ({}); add op_script to run it from the CLI too",
      op.name, config::execution_mode_name(op.execution_mode),
      orchestrated ? "Client.get_test_case / get_test_batch, then submit_output"
                   : "Client.validate_op or fuzz_op_client_side");
}

std::string dtype_list(const std::vector<tensor::DType>& dtypes) {
  std::string out;
  for (auto d : dtypes) out += (out.empty() ? "" : ", ") + std::string(tensor::dtype_name(d));
  return out;
}

Expected<fuzz::CaseFilter> filter_for(const config::OpConfig& op, const Selection& s) {
  fuzz::CaseFilter f;
  if (s.dtype) {
    if (std::find(op.dtypes.begin(), op.dtypes.end(), *s.dtype) == op.dtypes.end()) {
      return fail(ErrorKind::usage,
                  fmt::format("op '{}' is not tested in {} (its dtypes: {}); add it to the op's "
                              "dtypes in gpuemu.toml or pick one of those",
                              op.name, tensor::dtype_name(*s.dtype), dtype_list(op.dtypes)));
    }
    f.dtype = s.dtype;
  }
  if (s.layout) {
    if (std::find(op.layouts.begin(), op.layouts.end(), *s.layout) == op.layouts.end()) {
      return fail(ErrorKind::usage,
                  fmt::format("op '{}' does not declare layout '{}'; add it to the op's layouts", op.name,
                              tensor::layout_name(*s.layout)));
    }
    f.layout = s.layout;
  }
  if (s.values && *s.values != rng::ValueDistribution::mixed) f.distribution = s.values;
  return f;
}

// The corners a plan of `count` cases per stream has no room for, named (with `prefix`).
void note_dropped(OpPlan& plan, const config::OpConfig& op, int count, const std::string& prefix) {
  const auto all = fuzz::corners(op);
  for (std::size_t k = static_cast<std::size_t>(std::max(count, 0)); k < all.size(); ++k)
    plan.corners_dropped.push_back(prefix + all[k].name);
}

// Every selected op can have its cases made: one whose inputs would all take the default shape is
// a configuration error before any case runs (config/default_shapes.hpp).
Expected<std::vector<const config::OpConfig*>> with_declared_shapes(
    std::vector<const config::OpConfig*> ops) {
  for (const auto* op : ops) {
    if (auto problem = config::undeclared_input_shapes(*op)) return fail(ErrorKind::config, *problem);
  }
  return ops;
}

}  // namespace

Expected<std::vector<const config::OpConfig*>> select_ops(const config::Config& config,
                                                          const std::vector<std::string>& names) {
  std::vector<const config::OpConfig*> ops;
  if (names.empty()) {
    for (const auto& op : config.ops) {
      if (runnable_here(op)) ops.push_back(&op);
    }
    if (ops.empty()) {
      std::string left_out;
      for (const auto& line : ops_not_run_here(config)) left_out += "; " + line;
      return fail(ErrorKind::config,
                  fmt::format("{}: no [[ops]] with both a reference and an op_script to run{}; "
                              "add one (see docs/configuration.md)",
                              config.project_file.string(), left_out));
    }
    return with_declared_shapes(std::move(ops));
  }
  std::vector<std::string> known;
  for (const auto& op : config.ops) {
    if (op.spec != op.name && std::find(known.begin(), known.end(), op.spec) == known.end())
      known.push_back(op.spec);
    if (op.autotune && std::find(known.begin(), known.end(), op.autotune->of) == known.end())
      known.push_back(op.autotune->of);
    known.push_back(op.name);
  }
  for (const auto& name : names) {
    // NAME is an op (all its implementations and autotune variants), one implementation
    // ("op/implementation", with its variants) or one variant ("op[BLOCK=64,num_warps=4]").
    std::vector<const config::OpConfig*> matched;
    for (const auto& op : config.ops) {
      if (op.name == name || op.spec == name || (op.autotune && op.autotune->of == name))
        matched.push_back(&op);
    }
    if (matched.empty()) {
      return fail(ErrorKind::usage,
                  fmt::format("unknown op '{}'{}; ops in {}: {}", name,
                              util::did_you_mean_suffix(name, known), config.project_file.string(), [&] {
                                std::string all;
                                for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
                                return all;
                              }()));
    }
    for (const auto* op : matched) {
      if (!runnable_here(*op)) return fail(ErrorKind::usage, client_runs_text(*op));
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    }
  }
  return with_declared_shapes(std::move(ops));
}

std::vector<std::string> ops_not_run_here(const config::Config& config) {
  std::vector<std::string> lines;
  for (const auto& op : config.ops) {
    if (!runnable_here(op)) lines.push_back(client_runs_text(op));
  }
  return lines;
}

std::uint64_t resolve_master_seed(std::optional<std::uint64_t> cli_seed, const config::Config& config) {
  if (cli_seed) return *cli_seed;
  if (config.validation.seed != 0) return config.validation.seed;
  std::random_device device;
  std::uint64_t seed = 0;
  while (seed == 0) seed = (std::uint64_t{device()} << 32) | device();
  return seed;
}

Expected<RunPlan> plan_test(const config::Config& config, const Selection& selection,
                            std::uint64_t master_seed, int cases_per_dtype) {
  RunPlan plan{.command = "test", .master_seed = master_seed};
  for (const auto* op : TRY(select_ops(config, selection.ops))) {
    OpPlan op_plan{op, {}};
    for (auto dtype : op->dtypes) {
      if (selection.dtype && dtype != *selection.dtype) continue;
      Selection per_dtype = selection;
      per_dtype.dtype = dtype;
      auto filter = TRY(filter_for(*op, per_dtype));
      const std::string stream = "test/" + std::string(tensor::dtype_name(dtype));
      for (int i = 0; i < cases_per_dtype; ++i) {
        op_plan.seeds.push_back(
            fuzz::run_case_seed(*op, master_seed, stream, static_cast<std::uint64_t>(i), filter));
      }
      note_dropped(op_plan, *op, cases_per_dtype, std::string(tensor::dtype_name(dtype)) + ": ");
    }
    if (!op_plan.seeds.empty()) plan.ops.push_back(std::move(op_plan));
  }
  if (plan.ops.empty() && selection.dtype) {
    return fail(ErrorKind::usage,
                fmt::format("no selected op is tested in {}", tensor::dtype_name(*selection.dtype)));
  }
  return plan;
}

Expected<RunPlan> plan_fuzz(const config::Config& config, const Selection& selection,
                            std::uint64_t master_seed, int iterations, CornerCases corner_cases) {
  RunPlan plan{.command = "fuzz", .master_seed = master_seed};
  std::optional<Error> first_error;
  for (const auto* op : TRY(select_ops(config, selection.ops))) {
    auto filter = filter_for(*op, selection);
    if (!filter) {
      // With every op selected, ops lacking a forced dtype/layout are left out, not an error.
      if (!selection.ops.empty()) return std::unexpected(filter.error());
      if (!first_error) first_error = filter.error();
      continue;
    }
    OpPlan op_plan{op, {}};
    for (int i = 0; i < iterations; ++i) {
      const auto index = static_cast<std::uint64_t>(i);
      op_plan.seeds.push_back(corner_cases == CornerCases::first
                                  ? fuzz::run_case_seed(*op, master_seed, "fuzz", index, *filter)
                                  : fuzz::case_seed(*op, master_seed, "fuzz", index, *filter));
    }
    if (corner_cases == CornerCases::first) note_dropped(op_plan, *op, iterations, "");
    plan.ops.push_back(std::move(op_plan));
  }
  if (plan.ops.empty() && first_error) {
    return fail(ErrorKind::usage,
                "no op matches the requested --dtype/--layout; for example, " + first_error->message);
  }
  return plan;
}

void bound_by_thorough_timeout(RunPlan& plan, const config::Config& config) {
  plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(config.ci.thorough_timeout);
}

std::optional<std::string> thorough_timeout_stop(const config::Config& config, const RunPlan& plan,
                                                 const result::RunResult& result) {
  // A partial run ended by --fail-fast stopped before its deadline; only the budget's stop is this one.
  if (!result.partial || !plan.deadline || std::chrono::steady_clock::now() < *plan.deadline)
    return std::nullopt;
  std::size_t planned = 0;
  for (const auto& op : plan.ops) planned += op.seeds.size();
  int ran = 0;
  for (const auto& op : result.ops) ran += op.total;
  return fmt::format(
      "stopped at [ci] thorough_timeout ({} s) after {} of {} planned cases: the results are partial, so "
      "the run fails; raise thorough_timeout under [ci] in gpuemu.toml, or run fewer cases (--cases, "
      "--op, --dtype)",
      config.ci.thorough_timeout, ran, planned);
}

}  // namespace gpuemu::engine
