// The case plan of `gpuemu ci run` (see ci_plan.hpp). Built from the `test` and `fuzz` plans of
// each op, so every ci case replays with `gpuemu reproduce SEED --op OP` like any other case.
#include "cli/ci_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/plans.hpp"

namespace gpuemu::cli {

std::string Shard::label() const {
  return fmt::format("{}/{}", index + 1, count);
}

Expected<Shard> parse_shard(const std::string& text) {
  const auto bad = [&] {
    return fail(ErrorKind::usage,
                fmt::format("--shard '{}' is not I/N with 1 <= I <= N (e.g. --shard 2/4)", text));
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) return bad();
  try {
    std::size_t used_i = 0, used_n = 0;
    const auto i = std::stoull(text.substr(0, slash), &used_i);
    const auto n = std::stoull(text.substr(slash + 1), &used_n);
    if (used_i != slash || used_n != text.size() - slash - 1 || i < 1 || n < 1 || i > n) return bad();
    return Shard{i - 1, n};
  } catch (const std::exception&) {
    return bad();
  }
}

namespace {

void append(engine::OpPlan& into, const engine::RunPlan& plan) {
  for (const auto& op : plan.ops) {
    into.seeds.insert(into.seeds.end(), op.seeds.begin(), op.seeds.end());
    into.corners_dropped.insert(into.corners_dropped.end(), op.corners_dropped.begin(),
                                op.corners_dropped.end());
  }
}

}  // namespace

Expected<engine::RunPlan> plan_ci(const config::Config& config, std::uint64_t master_seed,
                                  const CiPlanOptions& options) {
  const int iterations = options.iterations > 0
                             ? options.iterations
                             : (options.quick ? config.ci.quick_iterations : config.ci.fuzz_iterations);
  const int test_cases = options.test_cases > 0 ? options.test_cases : config.validation.test_cases;
  engine::RunPlan plan{.command = options.command, .master_seed = master_seed};
  for (const auto* op : TRY(engine::select_ops(config, options.ops))) {
    engine::OpPlan op_plan{.op = op};
    engine::Selection selection;
    selection.ops = {op->name};
    if (!options.quick) {
      selection.dtype = options.dtype;
      if (options.dtype && std::ranges::find(op->dtypes, *options.dtype) == op->dtypes.end()) continue;
      append(op_plan, TRY(engine::plan_test(config, selection, master_seed, test_cases)));
      append(op_plan,
             TRY(engine::plan_fuzz(config, selection, master_seed, iterations, engine::CornerCases::skip)));
    } else {
      std::vector<tensor::DType> dtypes;
      for (auto dtype : config.ci.quick_dtypes) {
        if (options.dtype && dtype != *options.dtype) continue;
        if (std::ranges::find(op->dtypes, dtype) != op->dtypes.end()) dtypes.push_back(dtype);
      }
      // The fuzz budget is spread over the op's quick dtypes, the remainder to the first ones.
      const int count = static_cast<int>(dtypes.size());
      for (int k = 0; k < count; ++k) {
        selection.dtype = dtypes[k];
        append(op_plan, TRY(engine::plan_test(config, selection, master_seed, test_cases)));
        const int share = iterations / count + (k < iterations % count ? 1 : 0);
        if (share > 0)
          append(op_plan,
                 TRY(engine::plan_fuzz(config, selection, master_seed, share, engine::CornerCases::skip)));
      }
    }
    if (!op_plan.seeds.empty()) plan.ops.push_back(std::move(op_plan));
  }
  if (plan.ops.empty() && options.dtype) {
    return fail(ErrorKind::usage,
                fmt::format("no selected op is tested in {}{}", tensor::dtype_name(*options.dtype),
                            options.quick ? " among [ci] quick_dtypes" : ""));
  }
  if (plan.ops.empty()) {
    std::vector<std::string> names;
    for (auto dtype : config.ci.quick_dtypes) names.emplace_back(tensor::dtype_name(dtype));
    return fail(ErrorKind::config,
                options.quick
                    ? fmt::format("{}: no op declares a dtype of [ci] quick_dtypes ({}): add one of the ops' "
                                  "dtypes to quick_dtypes",
                                  config.project_file.string(), fmt::join(names, ", "))
                    : fmt::format("{}: no op the CLI can run: add an [[ops]] entry with an op_script",
                                  config.project_file.string()));
  }
  return plan;
}

void keep_shard(engine::RunPlan& plan, const Shard& shard) {
  if (shard.count == 1) return;
  for (auto& op : plan.ops) {
    engine::OpPlan kept{.op = op.op, .corners_dropped = op.corners_dropped};
    for (std::size_t k = 0; k < op.seeds.size(); ++k) {
      const std::uint64_t index = op.indices.empty() ? k : op.indices[k];
      if (index % shard.count != shard.index) continue;
      kept.seeds.push_back(op.seeds[k]);
      kept.indices.push_back(index);
    }
    op = std::move(kept);
  }
  // An op with fewer cases than shards has none in some shards; it is then absent from them.
  std::erase_if(plan.ops, [](const engine::OpPlan& op) { return op.seeds.empty(); });
}

}  // namespace gpuemu::cli
