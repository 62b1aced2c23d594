// The store's read side: runs, results and failures newest first, and one failure by seed or id
// with its input snapshot decoded. Rows that cannot be decoded are errors naming the row.
#include <fmt/format.h>

#include "store/snapshot.hpp"
#include "store/store_impl.hpp"

namespace gpuemu::store {
namespace {

// LIMIT -1 means no limit in SQLite.
std::int64_t sql_limit(int limit) {
  return limit > 0 ? limit : -1;
}

constexpr const char* kFailureColumns = R"sql(
  f.id, f.run_id, f.op, f.seed, f.config_digest, f.dtype, f.layout, f.distribution, f.dims, f.shapes, f.kind,
  f.max_abs, f.max_rel, f.max_ulp, f.mismatches, f.elements, f.mismatch_fraction, f.tolerance_used, f.worst,
  f.message, f.stderr_tail, f.atol, f.rtol, f.minimized_from, f.created_at, r.master_seed,
  EXISTS (SELECT 1 FROM snapshots s WHERE s.failure_id = f.id)
FROM failures f LEFT JOIN runs r ON r.id = f.run_id)sql";

// Numbers persisted from enums: refuse ones this build does not know instead of casting blindly.
template <class Enum>
Expected<Enum> enum_column(std::int64_t value, Enum last, const std::string& what, std::string_view column) {
  if (value < 0 || value > static_cast<std::int64_t>(last)) {
    return fail(ErrorKind::parse, fmt::format("{}: {} number {} is unknown to this gpuemu; upgrade gpuemu",
                                              what, column, value));
  }
  return static_cast<Enum>(value);
}

Expected<StoredFailure> read_failure(const sqlite::Statement& row, const std::string& file) {
  StoredFailure f;
  f.id = row.column_int(0);
  const std::string what = fmt::format("failure {} in {}", f.id, file);
  f.run_id = row.column_optional_int(1);
  auto& r = f.record;
  r.op = row.column_text(2);
  r.seed = TRY(detail::parse_seed(row.column_text(3), what));
  f.config_digest = row.column_text(4);
  r.params.dtype = TRY(enum_column(row.column_int(5), tensor::DType::bool_, what, "dtype"));
  r.params.layout = TRY(enum_column(row.column_int(6), tensor::Layout::strided, what, "layout"));
  r.params.distribution =
      TRY(enum_column(row.column_int(7), rng::ValueDistribution::adversarial, what, "distribution"));
  r.dims = TRY(detail::parse_dims(row.column_text(8), what + " dims"));
  r.shapes = TRY(detail::parse_shapes(row.column_text(9), what + " shapes"));
  r.verdict.kind = TRY(enum_column(row.column_int(10), check::FailureKind::output_aliased, what, "kind"));
  auto& s = r.verdict.stats;
  s.max_abs = row.column_double(11);
  s.max_rel = row.column_double(12);
  s.max_ulp = row.column_double(13);
  s.mismatches = row.column_int(14);
  s.elements = row.column_int(15);
  s.mismatch_fraction = row.column_double(16);
  s.tolerance_used = row.column_double(17);
  s.worst = TRY(detail::parse_worst(row.column_text(18), what + " worst"));
  r.verdict.message = row.column_text(19);
  r.stderr_tail = row.column_text(20);
  r.tolerance.atol = row.column_double(21);
  r.tolerance.rtol = row.column_double(22);
  f.minimized_from = row.column_optional_int(23);
  f.created_at = row.column_int(24);
  if (!row.column_is_null(25)) f.master_seed = TRY(detail::parse_seed(row.column_text(25), what + " run"));
  f.has_snapshot = row.column_int(26) != 0;
  return f;
}

Expected<std::vector<StoredFailure>> select_failures(const Store::Impl& impl, const std::string& where_order,
                                                     const std::function<void(sqlite::Statement&)>& bind) {
  auto select = TRY(impl.db.prepare(fmt::format("SELECT {} {}", kFailureColumns, where_order)));
  bind(select);
  std::vector<StoredFailure> failures;
  while (TRY(select.step())) failures.push_back(TRY(read_failure(select, impl.db.file().string())));
  return failures;
}

Expected<void> load_snapshot(const Store::Impl& impl, StoredFailure& failure) {
  if (!failure.has_snapshot) return {};
  auto select = TRY(impl.db.prepare("SELECT format, bytes FROM snapshots WHERE failure_id = ?1"));
  select.bind(1, failure.id);
  if (!TRY(select.step())) return {};
  const std::string what =
      fmt::format("the input snapshot of failure {} in {}", failure.id, impl.db.file().string());
  if (select.column_int(0) != kSnapshotFormat) {
    return fail(ErrorKind::parse,
                fmt::format("{} has format {}, which this gpuemu cannot read; upgrade gpuemu", what,
                            select.column_int(0)));
  }
  auto tensors = TRY(decode_snapshot(select.column_blob(1), what));
  failure.record.inputs = std::make_shared<const tensor::NamedTensors>(std::move(tensors));
  return {};
}

Expected<std::optional<StoredFailure>> first_with_snapshot(const Store::Impl& impl,
                                                           std::vector<StoredFailure> failures) {
  if (failures.empty()) return std::optional<StoredFailure>();
  TRY(load_snapshot(impl, failures.front()));
  return std::optional<StoredFailure>(std::move(failures.front()));
}

}  // namespace

Expected<std::vector<StoredRun>> Store::list_runs(const Query& query) const {
  std::lock_guard lock(impl_->mutex);
  auto select = TRY(impl_->db.prepare(R"sql(
SELECT r.id, r.command, r.master_seed, r.config_digest, r.project, r.started_at, r.finished_at, r.duration_secs,
       r.partial, r.passed, (SELECT count(*) FROM failures f WHERE f.run_id = r.id AND f.minimized_from IS NULL)
FROM runs r
WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id AND (x.op = ?1 OR substr(x.op, 1, length(?1) + 1) = ?1 || '/'))
                  OR EXISTS (SELECT 1 FROM failures x WHERE x.run_id = r.id AND (x.op = ?1 OR substr(x.op, 1, length(?1) + 1) = ?1 || '/')))
  AND (?2 IS NULL OR r.started_at >= ?2)
ORDER BY r.id DESC LIMIT ?3)sql"));
  select.bind(1, query.op).bind(2, query.since).bind(3, sql_limit(query.limit));
  std::vector<StoredRun> runs;
  while (TRY(select.step())) {
    StoredRun run;
    run.id = select.column_int(0);
    run.info.command = select.column_text(1);
    run.info.master_seed =
        TRY(detail::parse_seed(select.column_text(2), fmt::format("run {} in {}", run.id, file().string())));
    run.info.config_digest = select.column_text(3);
    run.info.project = select.column_text(4);
    run.started_at = select.column_int(5);
    run.finished_at = select.column_optional_int(6);
    run.duration_secs = select.column_is_null(7) ? 0.0 : select.column_double(7);
    run.partial = select.column_int(8) != 0;
    if (auto passed = select.column_optional_int(9)) run.passed = *passed != 0;
    run.failures = select.column_int(10);
    runs.push_back(std::move(run));
  }
  return runs;
}

Expected<std::vector<StoredResult>> Store::list_results(const Query& query) const {
  std::lock_guard lock(impl_->mutex);
  auto select = TRY(impl_->db.prepare(R"sql(
SELECT x.id, x.run_id, r.command, x.op, x.source, x.created_at, x.dtype, x.total, x.passed, x.failed, x.errors,
       x.max_abs, x.max_rel, x.max_ulp, x.tolerance_used, x.atol, x.rtol
FROM results x JOIN runs r ON r.id = x.run_id
WHERE (?1 IS NULL OR x.op = ?1 OR substr(x.op, 1, length(?1) + 1) = ?1 || '/') AND (?2 IS NULL OR x.created_at >= ?2)
ORDER BY x.id DESC LIMIT ?3)sql"));
  select.bind(1, query.op).bind(2, query.since).bind(3, sql_limit(query.limit));
  std::vector<StoredResult> results;
  while (TRY(select.step())) {
    StoredResult x;
    x.id = select.column_int(0);
    x.run_id = select.column_int(1);
    x.command = select.column_text(2);
    x.op = select.column_text(3);
    x.source = select.column_text(4);
    x.created_at = select.column_int(5);
    const std::string what = fmt::format("result {} in {}", x.id, file().string());
    auto& d = x.summary;
    d.dtype = TRY(enum_column(select.column_int(6), tensor::DType::bool_, what, "dtype"));
    d.total = static_cast<int>(select.column_int(7));
    d.passed = static_cast<int>(select.column_int(8));
    d.failed = static_cast<int>(select.column_int(9));
    d.errors = static_cast<int>(select.column_int(10));
    d.max_abs = select.column_double(11);
    d.max_rel = select.column_double(12);
    d.max_ulp = select.column_double(13);
    d.tolerance_used = select.column_double(14);
    d.tolerance.atol = select.column_double(15);
    d.tolerance.rtol = select.column_double(16);
    results.push_back(std::move(x));
  }
  return results;
}

Expected<std::vector<StoredFailure>> Store::list_failures(const Query& query) const {
  std::lock_guard lock(impl_->mutex);
  return select_failures(*impl_,
                         "WHERE (?1 IS NULL OR f.op = ?1 OR substr(f.op, 1, length(?1) + 1) = ?1 || '/') AND (?2 IS NULL OR f.created_at >= ?2) "
                         "ORDER BY f.id DESC LIMIT ?3",
                         [&](sqlite::Statement& s) {
                           s.bind(1, query.op).bind(2, query.since).bind(3, sql_limit(query.limit));
                         });
}

Expected<std::optional<StoredFailure>> Store::find_failure(std::uint64_t seed,
                                                           const std::optional<std::string>& op) const {
  std::lock_guard lock(impl_->mutex);
  auto failures = TRY(
      select_failures(*impl_, "WHERE f.seed = ?1 AND (?2 IS NULL OR f.op = ?2) ORDER BY f.id DESC LIMIT 1",
                      [&](sqlite::Statement& s) { s.bind(1, detail::seed_text(seed)).bind(2, op); }));
  return first_with_snapshot(*impl_, std::move(failures));
}

Expected<std::optional<StoredFailure>> Store::get_failure(FailureId id) const {
  std::lock_guard lock(impl_->mutex);
  auto failures =
      TRY(select_failures(*impl_, "WHERE f.id = ?1", [&](sqlite::Statement& s) { s.bind(1, id); }));
  return first_with_snapshot(*impl_, std::move(failures));
}

Expected<std::vector<StoredFailure>> Store::list_minimized(FailureId original) const {
  std::lock_guard lock(impl_->mutex);
  return select_failures(*impl_, "WHERE f.minimized_from = ?1 ORDER BY f.id DESC",
                         [&](sqlite::Statement& s) { s.bind(1, original); });
}

}  // namespace gpuemu::store
