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
#include "fuzz/corners.hpp"
#include "proc/cancel.hpp"

namespace gpuemu::engine {
namespace {

// How many cases before an op's end the next op's workers start: about their start time (15-25 ms
// for a numpy worker) over a light case's.
constexpr std::size_t kWarmUpAhead = 4;

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
    if (r.launches) {
      if (!result.launches) result.launches.emplace();
      ++result.launches->calls;
      if (r.launches->empty()) ++result.launches->without_launch;
      for (const auto& [kernel, n] : *r.launches) result.launches->kernels[kernel] += n;
    }
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

namespace {

// The corner cases of an op's plan, as result.json lists them, and the ones it dropped.
void list_corners(const OpPlan& plan, result::OpResult& out) {
  const auto all = fuzz::corners(*plan.op);
  for (std::size_t k = 0; k < plan.seeds.size(); ++k) {
    if (const fuzz::Corner* corner = fuzz::corner_of(all, plan.seeds[k]))
      out.corners.push_back({plan.indices.empty() ? k : plan.indices[k], plan.seeds[k], corner->name});
  }
  out.corners_dropped = plan.corners_dropped;
}

// One run of a plan: its work items in plan order, what the job threads share while they take them,
// and the RunResult folded from their records. execute() makes one and runs it.
class RunExecutor {
 public:
  RunExecutor(const config::Config& config, const RunPlan& plan, ResultSink* sink, const ProgressFn& progress)
      : config_(config), plan_(plan), sink_(sink), progress_(progress) {}

  Expected<result::RunResult> run() {
    // Once per run, not per case: code that does not load is a config error before any case runs.
    // Injected runners (the engine's unit tests) start no Python, so there is nothing to load.
    make_items();
    // With one job thread, the first op's workers start now: they fork and import while the load check
    // runs, instead of after it (docs/performance.md, (j)).
    if (threads_ == 1 && !items_.empty()) {
      first_session_ = std::make_unique<OpSession>(config_, *plan_.ops[items_[0].op_index].op, plan_.runners);
      if (plan_.deadline) first_session_->set_stop_at(*plan_.deadline);
      first_session_->warm_up();
    }
    if (!plan_.runners) inferred_sources_ = TRY(check_op_loads(config_, planned_ops()));
    run_job_threads();
    if (cancelled_) {  // before `fatal_`: an interrupted case may have ended in an error too
      return fail(ErrorKind::io, "the run was cancelled: its client disconnected or the daemon is stopping");
    }
    if (fatal_) return std::unexpected(*fatal_);
    return fold();
  }

 private:
  std::vector<const config::OpConfig*> planned_ops() const {
    std::vector<const config::OpConfig*> planned;
    for (const auto& op_plan : plan_.ops) planned.push_back(op_plan.op);
    return planned;
  }

  void make_items() {
    op_totals_.assign(plan_.ops.size(), 0);
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      const auto& op_plan = plan_.ops[i];
      for (std::size_t k = 0; k < op_plan.seeds.size(); ++k) {
        items_.push_back({i, op_plan.seeds[k], k < op_plan.indices.size() ? op_plan.indices[k] : k});
      }
      op_totals_[i] = op_plan.seeds.size();
    }
    // For each item, where the next op's items begin (items_.size() when none follow): that op's
    // workers are started while this op's last cases run.
    next_op_at_.assign(items_.size(), items_.size());
    for (std::size_t i = items_.size(); i-- > 1;) {
      next_op_at_[i - 1] = items_[i].op_index != items_[i - 1].op_index ? i : next_op_at_[i];
    }
    records_.resize(items_.size());
    threads_ =
        std::clamp<std::size_t>(plan_.jobs < 1 ? 1 : plan_.jobs, 1, std::max<std::size_t>(1, items_.size()));
    first_failure_ = items_.size();
    done_.assign(plan_.ops.size(), 0);
    not_passed_.assign(plan_.ops.size(), 0);
  }

  void run_job_threads() {
    if (threads_ == 1) {
      work();
      return;
    }
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads_; ++t) pool.emplace_back([this] { work(); });
  }

  // One job thread: claims items until none is left or the run stops, keeping an OpSession per op.
  void work() {
    const proc::CancelScope scope(cancel_);
    // Sessions this thread is done with end on threads of their own (joined when this one ends):
    // stopping their workers and freeing their files takes milliseconds an op, which the next op's
    // start need not wait for (docs/performance.md, (j)).
    std::vector<std::jthread> retiring;
    std::map<std::size_t, std::unique_ptr<OpSession>> sessions;
    if (first_session_) sessions[items_[0].op_index] = std::move(first_session_);
    while (!stop_) {
      const std::optional<std::size_t> index = claim();
      if (!index) return;
      const Item& item = items_[*index];
      for (auto it = sessions.begin(); it != sessions.end() && it->first < item.op_index;) {
        retiring.emplace_back([done_with = std::move(it->second)]() mutable { done_with.reset(); });
        it = sessions.erase(it);
      }
      OpSession& session = session_for(sessions, item.op_index);
      warm_up_next_op(sessions, *index);
      // With one job thread the next items are this thread's: the next starts while this case is
      // judged, and the one after it is made meanwhile.
      auto record = session.run_seed(item.seed, seeds_after(item),
                                     threads_ == 1 ? OpSession::Ahead::run : OpSession::Ahead::make);
      if (proc::cancel_requested()) {  // the case was interrupted: its record is no result
        cancelled_ = true;
        return;
      }
      if (record) record->index = item.case_index;
      if (!keep(*index, std::move(record))) return;
    }
  }

  // The position of the next item, or nothing when this thread should end: the run was cancelled,
  // every item is taken, an earlier case failed under fail_fast, or the deadline has passed.
  std::optional<std::size_t> claim() {
    if (proc::cancel_requested()) {
      cancelled_ = true;
      return std::nullopt;
    }
    const std::size_t index = next_.fetch_add(1);
    if (index >= items_.size()) return std::nullopt;
    if (plan_.fail_fast && index > first_failure_.load()) return std::nullopt;
    if (plan_.deadline && std::chrono::steady_clock::now() >= *plan_.deadline) {
      out_of_time_ = true;
      return std::nullopt;
    }
    return index;
  }

  // Items come op by op, so an op this thread ran before has no items left to claim: work() ends its
  // session and warm workers then, not at the end of the run (a project of many Triton ops kept one
  // torch-and-Triton worker per op and role alive at once: gigabytes).
  OpSession& session_for(std::map<std::size_t, std::unique_ptr<OpSession>>& sessions,
                         std::size_t op_index) const {
    auto& session = sessions[op_index];
    if (!session) {
      session = std::make_unique<OpSession>(config_, *plan_.ops[op_index].op, plan_.runners);
      if (plan_.deadline) session->set_stop_at(*plan_.deadline);
    }
    return *session;
  }

  // A few cases before an op ends, the next op's workers start (forking and importing its code take
  // milliseconds, which would otherwise lie between the two ops: docs/performance.md, (j)). With
  // several job threads any of them may take the next op's first case: none starts ahead.
  void warm_up_next_op(std::map<std::size_t, std::unique_ptr<OpSession>>& sessions, std::size_t index) const {
    const std::size_t ahead = next_op_at_[index];
    if (threads_ != 1 || ahead >= items_.size() || ahead - index > kWarmUpAhead) return;
    if (sessions.contains(items_[ahead].op_index)) return;
    session_for(sessions, items_[ahead].op_index).warm_up();
  }

  // The seeds of the two items after this one that are the same op's, in plan order: made ready
  // while this case runs. With several job threads another thread may take them, and then the
  // work is only thrown away.
  std::vector<std::uint64_t> seeds_after(const Item& item) const {
    std::vector<std::uint64_t> seeds;
    for (std::size_t peek = next_.load(); peek < items_.size() && seeds.size() < 2; ++peek) {
      if (items_[peek].op_index != item.op_index) break;
      seeds.push_back(items_[peek].seed);
    }
    return seeds;
  }

  // Stores the case at `index` (sink, counters, progress); false when this thread should end.
  bool keep(std::size_t index, Expected<result::CaseRecord> record) {
    const std::size_t op = items_[index].op_index;
    std::lock_guard lock(mutex_);
    if (!record) return stop_with(record.error());
    if (record->cut) {
      // Killed at the budget: reported as cut, counted nowhere, not stored as a failure.
      cut_.push_back(
          {index, result::CutCase{record->op, record->seed, record->index, record->verdict.message}});
      out_of_time_ = true;
      return false;
    }
    if (sink_) {
      if (auto stored = sink_->on_case(*record); !stored) return stop_with(stored.error());
    }
    ++done_[op];
    if (!record->verdict.passed()) {
      ++not_passed_[op];
      if (plan_.fail_fast) {
        std::size_t current = first_failure_.load();
        while (index < current && !first_failure_.compare_exchange_weak(current, index)) {
        }
      }
    }
    if (progress_) progress_(plan_.ops[op].op->name, done_[op], op_totals_[op], not_passed_[op]);
    records_[index] = std::move(*record);
    return true;
  }

  // The run's first error ends every thread; later ones are dropped. Called with mutex_ held.
  bool stop_with(Error error) {
    if (!fatal_) fatal_ = std::move(error);
    stop_ = true;
    return false;
  }

  // The RunResult of the records kept: under fail_fast only the items up to the first failure.
  result::RunResult fold() {
    result::RunResult result;
    result.command = plan_.command;
    result.master_seed = plan_.master_seed;
    result.config_digest = config_.digest;
    result.project = config_.project.name;
    const std::size_t cutoff =
        plan_.fail_fast ? std::min(first_failure_.load() + 1, items_.size()) : items_.size();
    result.partial = out_of_time_ || cutoff < items_.size();
    std::ranges::sort(cut_, {}, &std::pair<std::size_t, result::CutCase>::first);
    for (auto& [position, c] : cut_) {
      if (position < cutoff) result.cut.push_back(std::move(c));
    }
    std::vector<std::vector<result::CaseRecord>> per_op(plan_.ops.size());
    for (std::size_t i = 0; i < cutoff; ++i) {
      if (records_[i]) {
        per_op[items_[i].op_index].push_back(std::move(*records_[i]));
      } else {
        result.partial = true;
      }
    }
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      for (auto& warning : tolerance_warnings(config_, per_op[i]))
        result.warnings.push_back(std::move(warning));
      result.ops.push_back(summarize_op(config_, *plan_.ops[i].op, per_op[i]));
      list_corners(plan_.ops[i], result.ops.back());
      if (const auto& launches = result.ops.back().launches;
          launches && launches->without_launch > 0 && !plan_.ops[i].op->require_launch) {
        result.warnings.push_back(fmt::format(
            "op '{}' launched no @triton.jit kernel in {} of {} calls (require_launch = false): those cases "
            "checked the code it ran instead, not a kernel",
            plan_.ops[i].op->name, launches->without_launch, launches->calls));
      }
      if (!plan_.ops[i].corners_dropped.empty()) {
        result.warnings.push_back(fmt::format(
            "op '{}': the run has fewer cases than the op's {} corner cases and left out {}: {}; raise "
            "--cases (test) or --iterations (fuzz) to run them",
            plan_.ops[i].op->name, fuzz::corners(*plan_.ops[i].op).size(),
            plan_.ops[i].corners_dropped.size(), fmt::join(plan_.ops[i].corners_dropped, "; ")));
      }
      if (const auto it = inferred_sources_.find(plan_.ops[i].op->name);
          result.ops.back().source.empty() && it != inferred_sources_.end()) {
        result.ops.back().source = it->second;
      }
    }
    result.duration_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return result;
  }

  const config::Config& config_;
  const RunPlan& plan_;
  ResultSink* sink_;
  const ProgressFn& progress_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  const proc::CancelToken cancel_ = proc::current_cancel();  // the caller's: a daemon request's
  std::map<std::string, std::string> inferred_sources_;      // op name -> the source its load check found
  std::vector<Item> items_;
  std::vector<std::size_t> next_op_at_;  // by item position
  std::size_t threads_ = 1;
  std::unique_ptr<OpSession> first_session_;  // the first op's, warmed up during the load check
  std::vector<std::size_t> op_totals_;
  std::vector<std::optional<result::CaseRecord>> records_;  // by item position
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> first_failure_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> out_of_time_{false};
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;  // guards fatal_, the sink, progress and the counters below
  std::optional<Error> fatal_;
  std::vector<std::size_t> done_;
  std::vector<std::size_t> not_passed_;
  std::vector<std::pair<std::size_t, result::CutCase>> cut_;  // (item position, case)
};

}  // namespace

Expected<result::RunResult> execute(const config::Config& config, const RunPlan& plan, ResultSink* sink,
                                    const ProgressFn& progress) {
  return RunExecutor(config, plan, sink, progress).run();
}

}  // namespace gpuemu::engine
