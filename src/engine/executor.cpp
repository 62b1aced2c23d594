// The job-thread executor (see executor.hpp). Work items are taken in plan order from an
// atomic counter; each thread keeps its own OpSession per op, so warm workers stay per thread.
#include "engine/executor.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "engine/load_ops.hpp"
#include "engine/op_session.hpp"
#include "proc/cancel.hpp"

namespace gpuemu::engine {
namespace {

struct Item {
  std::size_t op_index;
  std::uint64_t seed;
  std::uint64_t case_index;
};

}  // namespace

std::optional<std::string> tolerance_warning(const config::Config& config, const result::CaseRecord& record) {
  const double used = record.verdict.stats.tolerance_used;
  const double threshold = config.policies.warn_threshold;
  if (!record.verdict.passed() || !(used > threshold)) return std::nullopt;
  return fmt::format(
      "{} [{}] passed but used {:.0f}% of its tolerance (warn_threshold {:.0f}%, seed {}): close "
      "to failing; look at it with '{}', or widen the tolerance ('gpuemu calibrate')",
      record.op, tensor::dtype_name(record.params.dtype), 100 * used, 100 * threshold, record.seed,
      result::replay_command(record));
}

std::vector<std::string> tolerance_warnings(const config::Config& config,
                                            const std::vector<result::CaseRecord>& records) {
  // (op, dtype) -> its worst passing case, in the order the groups first appear.
  std::vector<std::pair<std::string, const result::CaseRecord*>> worst;
  for (const auto& r : records) {
    if (!tolerance_warning(config, r)) continue;
    const std::string key = r.op + "\n" + std::string(tensor::dtype_name(r.params.dtype));
    auto it = std::ranges::find(worst, key, &std::pair<std::string, const result::CaseRecord*>::first);
    if (it == worst.end()) {
      worst.emplace_back(key, &r);
    } else if (r.verdict.stats.tolerance_used > it->second->verdict.stats.tolerance_used) {
      it->second = &r;
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, record] : worst) out.push_back(*tolerance_warning(config, *record));
  return out;
}

result::OpResult summarize_op(const config::Config& config, const config::OpConfig& op,
                              const std::vector<result::CaseRecord>& records) {
  result::OpResult result;
  result.op = op.name;
  if (!op.implementation.empty()) {
    result.spec = op.spec;
    result.implementation = op.implementation;
  }
  result.source = op.source;
  std::map<tensor::DType, result::DtypeSummary> by_dtype;
  for (auto dtype : op.dtypes) {
    by_dtype[dtype].dtype = dtype;
    by_dtype[dtype].tolerance = config.tolerance_for(op, dtype);
  }
  for (const auto& r : records) {
    result.timing += r.timing;
    if (result.runtime.is_null() && !r.runtime.is_null()) result.runtime = r.runtime;
    auto& d = by_dtype[r.params.dtype];
    d.dtype = r.params.dtype;
    d.tolerance = r.tolerance;
    ++d.total;
    ++result.total;
    const auto& s = r.verdict.stats;
    if (!check::is_script_error(r.verdict.kind)) {
      d.max_abs = std::max(d.max_abs, s.max_abs);
      d.max_rel = std::max(d.max_rel, s.max_rel);
      d.max_ulp = std::max(d.max_ulp, s.max_ulp);
      // Failing cases count too: a dtype that failed shows how far past its tolerance it went.
      d.tolerance_used = std::max(d.tolerance_used, s.tolerance_used);
    }
    if (r.verdict.passed()) {
      ++d.passed;
      ++result.passed;
    } else if (check::is_script_error(r.verdict.kind)) {
      ++d.errors;
      ++result.errors;
      result.failures.push_back(r);
    } else {
      ++d.failed;
      ++result.failed;
      result.failures.push_back(r);
    }
  }
  for (auto dtype : op.dtypes) result.dtypes.push_back(by_dtype[dtype]);
  for (const auto& [dtype, d] : by_dtype) {
    if (std::find(op.dtypes.begin(), op.dtypes.end(), dtype) == op.dtypes.end()) result.dtypes.push_back(d);
  }
  return result;
}

Expected<result::RunResult> execute(const config::Config& config, const RunPlan& plan, ResultSink* sink,
                                    const ProgressFn& progress) {
  const auto started = std::chrono::steady_clock::now();
  // Once per run, not per case: code that does not load is a config error before any case runs.
  // Injected runners (the engine's unit tests) start no Python, so there is nothing to load.
  std::vector<const config::OpConfig*> planned;
  for (const auto& op_plan : plan.ops) planned.push_back(op_plan.op);
  std::map<std::string, std::string> inferred_sources;
  if (!plan.runners) inferred_sources = TRY(check_op_loads(config, planned));
  std::vector<Item> items;
  std::vector<std::size_t> op_totals(plan.ops.size(), 0);
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const auto& op_plan = plan.ops[i];
    for (std::size_t k = 0; k < op_plan.seeds.size(); ++k) {
      items.push_back({i, op_plan.seeds[k], k < op_plan.indices.size() ? op_plan.indices[k] : k});
    }
    op_totals[i] = plan.ops[i].seeds.size();
  }

  std::vector<std::optional<result::CaseRecord>> records(items.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failure{items.size()};
  std::atomic<bool> stop{false};
  std::atomic<bool> out_of_time{false};
  std::atomic<bool> cancelled{false};
  const proc::CancelToken cancel = proc::current_cancel();  // the caller's: a daemon request's
  std::mutex mutex;  // guards fatal, sink, progress and the counters below
  std::optional<Error> fatal;
  std::vector<std::size_t> done(plan.ops.size(), 0);
  std::vector<std::size_t> not_passed(plan.ops.size(), 0);
  std::vector<std::pair<std::size_t, result::CutCase>> cut;  // (plan position, case)

  auto worker = [&] {
    const proc::CancelScope scope(cancel);
    std::map<std::size_t, std::unique_ptr<OpSession>> sessions;
    while (!stop) {
      if (proc::cancel_requested()) {
        cancelled = true;
        return;
      }
      const std::size_t index = next.fetch_add(1);
      if (index >= items.size()) return;
      if (plan.fail_fast && index > first_failure.load()) return;
      if (plan.deadline && std::chrono::steady_clock::now() >= *plan.deadline) {
        out_of_time = true;
        return;
      }
      const Item& item = items[index];
      // Items come op by op, so an op this thread ran before has no items left to claim: its session
      // and warm workers go now, not at the end of the run (a project of many Triton ops kept one
      // torch-and-Triton worker per op and role alive at once: gigabytes).
      std::erase_if(sessions, [&](const auto& entry) { return entry.first != item.op_index; });
      auto& session = sessions[item.op_index];
      if (!session) {
        session = std::make_unique<OpSession>(config, *plan.ops[item.op_index].op, plan.runners);
        if (plan.deadline) session->set_stop_at(*plan.deadline);
      }
      // The item after this one, if it is the same op's, is made ready while this case runs; with
      // several job threads another thread may take it, and then the work is only thrown away.
      std::optional<std::uint64_t> next_seed;
      if (const std::size_t peek = next.load(); peek < items.size() && items[peek].op_index == item.op_index)
        next_seed = items[peek].seed;
      auto record = session->run_seed(item.seed, next_seed);
      if (proc::cancel_requested()) {  // the case was interrupted: its record is no result
        cancelled = true;
        return;
      }
      if (record) record->index = item.case_index;
      std::lock_guard lock(mutex);
      if (!record) {
        if (!fatal) fatal = record.error();
        stop = true;
        return;
      }
      if (record->cut) {
        // Killed at the budget: reported as cut, counted nowhere, not stored as a failure.
        cut.push_back(
            {index, result::CutCase{record->op, record->seed, record->index, record->verdict.message}});
        out_of_time = true;
        return;
      }
      if (sink) {
        if (auto stored = sink->on_case(*record); !stored) {
          if (!fatal) fatal = stored.error();
          stop = true;
          return;
        }
      }
      ++done[item.op_index];
      if (!record->verdict.passed()) {
        ++not_passed[item.op_index];
        if (plan.fail_fast) {
          std::size_t current = first_failure.load();
          while (index < current && !first_failure.compare_exchange_weak(current, index)) {
          }
        }
      }
      if (progress)
        progress(plan.ops[item.op_index].op->name, done[item.op_index], op_totals[item.op_index],
                 not_passed[item.op_index]);
      records[index] = std::move(*record);
    }
  };

  const std::size_t threads =
      std::clamp<std::size_t>(plan.jobs < 1 ? 1 : plan.jobs, 1, std::max<std::size_t>(1, items.size()));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  }
  if (cancelled) {  // before `fatal`: an interrupted case may have ended in an error too
    return fail(ErrorKind::io, "the run was cancelled: its client disconnected or the daemon is stopping");
  }
  if (fatal) return std::unexpected(*fatal);

  result::RunResult result;
  result.command = plan.command;
  result.master_seed = plan.master_seed;
  result.config_digest = config.digest;
  result.project = config.project.name;
  const std::size_t cutoff = plan.fail_fast ? std::min(first_failure.load() + 1, items.size()) : items.size();
  result.partial = out_of_time || cutoff < items.size();
  std::ranges::sort(cut, {}, &std::pair<std::size_t, result::CutCase>::first);
  for (auto& [position, c] : cut) {
    if (position < cutoff) result.cut.push_back(std::move(c));
  }
  std::vector<std::vector<result::CaseRecord>> per_op(plan.ops.size());
  for (std::size_t i = 0; i < cutoff; ++i) {
    if (records[i]) {
      per_op[items[i].op_index].push_back(std::move(*records[i]));
    } else {
      result.partial = true;
    }
  }
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    for (auto& warning : tolerance_warnings(config, per_op[i])) result.warnings.push_back(std::move(warning));
    result.ops.push_back(summarize_op(config, *plan.ops[i].op, per_op[i]));
    if (const auto it = inferred_sources.find(plan.ops[i].op->name);
        result.ops.back().source.empty() && it != inferred_sources.end()) {
      result.ops.back().source = it->second;
    }
  }
  result.duration_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace gpuemu::engine
