// The store's writes: runs, failures with their snapshots, per-dtype summaries and minimized
// cases. Each public call is one BEGIN IMMEDIATE transaction, committed before it returns.
#include <fmt/format.h>

#include "store/columns.hpp"
#include "store/error_columns.hpp"
#include "store/snapshot.hpp"
#include "store/store_impl.hpp"

namespace gpuemu::store {
namespace {

// The ?N of named columns in the writes' lists (store/columns.hpp), at compile time.
consteval int failure_param(std::string_view name) {
  return columns::param(columns::kFailureWrite, name);
}
consteval int result_param(std::string_view name) {
  return columns::param(columns::kResultWrite, name);
}

}  // namespace

namespace detail {

Expected<FailureId> insert_failure(const Store::Impl& impl, std::optional<RunId> run,
                                   const std::string& config_digest, const result::CaseRecord& record,
                                   std::optional<FailureId> minimized_from) {
  static const std::string sql = "INSERT INTO failures (" + columns::joined(columns::kFailureWrite) +
                                 ") VALUES (" + columns::placeholders(columns::kFailureWrite) + ")";
  auto insert = TRY(impl.db.prepare(sql));
  const auto& stats = record.verdict.stats;
  insert.bind(failure_param("run_id"), run)
      .bind(failure_param("op"), record.op)
      .bind(failure_param("seed"), seed_text(record.seed))
      .bind(failure_param("config_digest"), config_digest)
      .bind(failure_param("dtype"), static_cast<int>(record.params.dtype))
      .bind(failure_param("layout"), static_cast<int>(record.params.layout))
      .bind(failure_param("distribution"), static_cast<int>(record.params.distribution))
      .bind(failure_param("dims"), dims_json(record.dims))
      .bind(failure_param("shapes"), shapes_json(record.shapes))
      .bind(failure_param("kind"), static_cast<int>(record.verdict.kind))
      .bind(failure_param("mismatches"), stats.mismatches)
      .bind(failure_param("elements"), stats.elements)
      .bind(failure_param("mismatch_fraction"), stats.mismatch_fraction)
      .bind(failure_param("worst"), worst_json(stats.worst))
      .bind(failure_param("message"), record.verdict.message)
      .bind(failure_param("stderr_tail"), record.stderr_tail)
      .bind(failure_param("minimized_from"), minimized_from)
      .bind(failure_param("created_at"), impl.now());
  columns::bind_errors<columns::kFailureWrite>(insert, stats, record.tolerance);
  TRY(insert.run());
  const FailureId id = sqlite3_last_insert_rowid(impl.db.handle());
  if (record.inputs) {
    const auto blob = encode_snapshot(*record.inputs);
    auto snapshot =
        TRY(impl.db.prepare("INSERT INTO snapshots (failure_id, format, bytes) VALUES (?1, ?2, ?3)"));
    snapshot.bind(1, id).bind(2, kSnapshotFormat).bind(3, std::span<const std::byte>(blob));
    TRY(snapshot.run());
  }
  return id;
}

}  // namespace detail

namespace {

// A write to a run id that begin_run never handed out (or whose row is gone).
std::unexpected<Error> no_such_run(const Store::Impl& impl, RunId run) {
  return fail(ErrorKind::usage, fmt::format("gpuemu database {} has no run {}; call begin_run first",
                                            impl.db.file().string(), run));
}

Expected<RunId> insert_run(const Store::Impl& impl, const RunInfo& info) {
  auto insert =
      TRY(impl.db.prepare("INSERT INTO runs (command, master_seed, config_digest, project, started_at) "
                          "VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert.bind(1, info.command)
      .bind(2, detail::seed_text(info.master_seed))
      .bind(3, info.config_digest)
      .bind(4, info.project)
      .bind(5, impl.now());
  TRY(insert.run());
  return sqlite3_last_insert_rowid(impl.db.handle());
}

// The run's config digest, which its failures carry; errors (usage) if the run does not exist.
Expected<std::string> run_digest(const Store::Impl& impl, RunId run) {
  auto select = TRY(impl.db.prepare("SELECT config_digest FROM runs WHERE id = ?1"));
  select.bind(1, run);
  if (!TRY(select.step())) return no_such_run(impl, run);
  return select.column_text(0);
}

Expected<void> upsert_summaries(const Store::Impl& impl, RunId run, const result::OpResult& op) {
  auto upsert = TRY(impl.db.prepare("INSERT INTO results (" + columns::joined(columns::kResultWrite) +
                                    ") VALUES (" + columns::placeholders(columns::kResultWrite) + R"sql()
ON CONFLICT (run_id, op, dtype) DO UPDATE SET
  source = excluded.source, total = excluded.total, passed = excluded.passed, failed = excluded.failed,
  errors = excluded.errors, max_abs = excluded.max_abs, max_rel = excluded.max_rel, max_ulp = excluded.max_ulp,
  tolerance_used = excluded.tolerance_used, atol = excluded.atol, rtol = excluded.rtol,
  created_at = excluded.created_at)sql"));
  for (const auto& d : op.dtypes) {
    upsert.reset();
    upsert.bind(result_param("run_id"), run)
        .bind(result_param("op"), op.op)
        .bind(result_param("source"), op.source)
        .bind(result_param("dtype"), static_cast<int>(d.dtype))
        .bind(result_param("total"), d.total)
        .bind(result_param("passed"), d.passed)
        .bind(result_param("failed"), d.failed)
        .bind(result_param("errors"), d.errors)
        .bind(result_param("created_at"), impl.now());
    columns::bind_errors<columns::kResultWrite>(upsert, d, d.tolerance);
    TRY(upsert.run());
  }
  return {};
}

Expected<void> update_finished(const Store::Impl& impl, RunId run, const result::RunResult& result) {
  auto update = TRY(impl.db.prepare(
      "UPDATE runs SET finished_at = ?2, duration_secs = ?3, partial = ?4, passed = ?5 WHERE id = ?1"));
  update.bind(1, run)
      .bind(2, impl.now())
      .bind(3, result.duration_secs)
      .bind(4, result.partial ? 1 : 0)
      .bind(5, result.passed() ? 1 : 0);
  TRY(update.run());
  if (sqlite3_changes(impl.db.handle()) == 0) return no_such_run(impl, run);
  return {};
}

}  // namespace

Expected<RunId> Store::begin_run(const RunInfo& info) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  const RunId id = TRY(insert_run(*impl_, info));
  TRY(transaction.commit());
  return id;
}

Expected<FailureId> Store::record_failure(RunId run, const result::CaseRecord& record) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  const auto digest = TRY(run_digest(*impl_, run));
  const FailureId id = TRY(detail::insert_failure(*impl_, run, digest, record, std::nullopt));
  TRY(transaction.commit());
  return id;
}

Expected<void> Store::record_op_summary(RunId run, const result::OpResult& op) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  TRY(run_digest(*impl_, run));
  TRY(upsert_summaries(*impl_, run, op));
  TRY(transaction.commit());
  return {};
}

Expected<void> Store::finish_run(RunId run, const result::RunResult& result) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  TRY(update_finished(*impl_, run, result));
  TRY(transaction.commit());
  return {};
}

Expected<RunId> Store::record_run(const result::RunResult& result) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  const RunId run = TRY(insert_run(*impl_, run_info(result)));
  for (const auto& op : result.ops) {
    for (const auto& failure : op.failures) {
      TRY(detail::insert_failure(*impl_, run, result.config_digest, failure, std::nullopt));
    }
    TRY(upsert_summaries(*impl_, run, op));
  }
  TRY(update_finished(*impl_, run, result));
  TRY(transaction.commit());
  return run;
}

Expected<FailureId> Store::record_minimized(FailureId original, const result::CaseRecord& record) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  auto select = TRY(impl_->db.prepare("SELECT run_id, config_digest FROM failures WHERE id = ?1"));
  select.bind(1, original);
  if (!TRY(select.step())) {
    return fail(ErrorKind::usage,
                fmt::format("gpuemu database {} has no failure {} to link the minimized case to; "
                            "list failures with `gpuemu failures`",
                            impl_->db.file().string(), original));
  }
  const auto run = select.column_optional_int(0);
  const auto digest = select.column_text(1);
  select.reset();
  const FailureId id = TRY(detail::insert_failure(*impl_, run, digest, record, original));
  TRY(transaction.commit());
  return id;
}

}  // namespace gpuemu::store
