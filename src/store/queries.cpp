// The store's read side: runs, results and failures newest first, and one failure by seed or id
// with its input snapshot decoded. Rows that cannot be decoded are errors naming the row.
#include <fmt/format.h>

#include "store/columns.hpp"
#include "store/error_columns.hpp"
#include "store/snapshot.hpp"
#include "store/store_impl.hpp"

namespace gpuemu::store {
namespace {

// A Query as the parameters of every list statement: ?1 the op (NULL: any), ?2 since (NULL: any
// time), ?3 the LIMIT (-1 is no limit in SQLite).
void bind_query(sqlite::Statement& statement, const Query& query) {
  statement.bind(1, query.op).bind(2, query.since).bind(3, std::int64_t{query.limit > 0 ? query.limit : -1});
}

// SQL true when `column` names the op ?1 or one of its implementations ("softmax/v2").
std::string op_matches(std::string_view column) {
  return fmt::format("({0} = ?1 OR substr({0}, 1, length(?1) + 1) = ?1 || '/')", column);
}

// Positions of named columns in the reads' lists (store/columns.hpp), at compile time.
consteval int failure_column(std::string_view name) {
  return columns::at(columns::kFailureRead, name);
}
consteval int run_column(std::string_view name) {
  return columns::at(columns::kRunRead, name);
}
consteval int result_column(std::string_view name) {
  return columns::at(columns::kResultRead, name);
}

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
  f.id = row.column_int(failure_column("f.id"));
  const std::string what = fmt::format("failure {} in {}", f.id, file);
  f.run_id = row.column_optional_int(failure_column("f.run_id"));
  auto& r = f.record;
  r.op = row.column_text(failure_column("f.op"));
  r.seed = TRY(detail::parse_seed(row.column_text(failure_column("f.seed")), what));
  f.config_digest = row.column_text(failure_column("f.config_digest"));
  r.params.dtype =
      TRY(enum_column(row.column_int(failure_column("f.dtype")), tensor::DType::bool_, what, "dtype"));
  r.params.layout = TRY(
      enum_column(row.column_int(failure_column("f.layout")), tensor::Layout::channels_last, what, "layout"));
  r.params.distribution = TRY(enum_column(row.column_int(failure_column("f.distribution")),
                                          rng::ValueDistribution::adversarial, what, "distribution"));
  r.dims = TRY(detail::parse_dims(row.column_text(failure_column("f.dims")), what + " dims"));
  r.shapes = TRY(detail::parse_shapes(row.column_text(failure_column("f.shapes")), what + " shapes"));
  r.verdict.kind =
      TRY(enum_column(row.column_int(failure_column("f.kind")), check::kLastFailureKind, what, "kind"));
  auto& s = r.verdict.stats;
  columns::read_errors<columns::kFailureRead, 'f'>(row, s, r.tolerance);
  s.mismatches = row.column_int(failure_column("f.mismatches"));
  s.elements = row.column_int(failure_column("f.elements"));
  s.mismatch_fraction = row.column_double(failure_column("f.mismatch_fraction"));
  s.worst = TRY(detail::parse_worst(row.column_text(failure_column("f.worst")), what + " worst"));
  r.verdict.message = row.column_text(failure_column("f.message"));
  r.stderr_tail = row.column_text(failure_column("f.stderr_tail"));
  f.minimized_from = row.column_optional_int(failure_column("f.minimized_from"));
  f.created_at = row.column_int(failure_column("f.created_at"));
  if (!row.column_is_null(failure_column("r.master_seed")))
    f.master_seed = TRY(detail::parse_seed(row.column_text(failure_column("r.master_seed")), what + " run"));
  f.has_snapshot = row.column_int(failure_column(columns::kHasSnapshot)) != 0;
  return f;
}

Expected<StoredRun> read_run(const sqlite::Statement& row, const std::string& file) {
  StoredRun run;
  run.id = row.column_int(run_column("r.id"));
  run.info.command = row.column_text(run_column("r.command"));
  run.info.master_seed = TRY(detail::parse_seed(row.column_text(run_column("r.master_seed")),
                                                fmt::format("run {} in {}", run.id, file)));
  run.info.config_digest = row.column_text(run_column("r.config_digest"));
  run.info.project = row.column_text(run_column("r.project"));
  run.started_at = row.column_int(run_column("r.started_at"));
  run.finished_at = row.column_optional_int(run_column("r.finished_at"));
  run.duration_secs = row.column_is_null(run_column("r.duration_secs"))
                          ? 0.0
                          : row.column_double(run_column("r.duration_secs"));
  run.partial = row.column_int(run_column("r.partial")) != 0;
  if (auto passed = row.column_optional_int(run_column("r.passed"))) run.passed = *passed != 0;
  run.failures = row.column_int(run_column(columns::kRunFailures));
  return run;
}

Expected<StoredResult> read_result(const sqlite::Statement& row, const std::string& file) {
  StoredResult x;
  x.id = row.column_int(result_column("x.id"));
  x.run_id = row.column_int(result_column("x.run_id"));
  x.command = row.column_text(result_column("r.command"));
  x.op = row.column_text(result_column("x.op"));
  x.source = row.column_text(result_column("x.source"));
  x.created_at = row.column_int(result_column("x.created_at"));
  const std::string what = fmt::format("result {} in {}", x.id, file);
  auto& d = x.summary;
  d.dtype = TRY(enum_column(row.column_int(result_column("x.dtype")), tensor::DType::bool_, what, "dtype"));
  d.total = static_cast<int>(row.column_int(result_column("x.total")));
  d.passed = static_cast<int>(row.column_int(result_column("x.passed")));
  d.failed = static_cast<int>(row.column_int(result_column("x.failed")));
  d.errors = static_cast<int>(row.column_int(result_column("x.errors")));
  columns::read_errors<columns::kResultRead, 'x'>(row, d, d.tolerance);
  return x;
}

// The one select-and-read of the list reads: prepares `sql`, lets `bind` set its parameters, and
// decodes every row with `read(row, the database file)`, which errors name.
template <class Row>
Expected<std::vector<Row>> select_rows(const Store::Impl& impl, std::string_view sql,
                                       const std::function<void(sqlite::Statement&)>& bind,
                                       Expected<Row> (*read)(const sqlite::Statement&, const std::string&)) {
  auto select = TRY(impl.db.prepare(sql));
  bind(select);
  const std::string file = impl.db.file().string();
  return sqlite::read_rows(select, [&](const sqlite::Statement& row) { return read(row, file); });
}

Expected<std::vector<StoredFailure>> select_failures(const Store::Impl& impl, const std::string& where_order,
                                                     const std::function<void(sqlite::Statement&)>& bind) {
  return select_rows(impl,
                     fmt::format("SELECT {} FROM failures f LEFT JOIN runs r ON r.id = f.run_id {}",
                                 columns::joined(columns::kFailureRead), where_order),
                     bind, read_failure);
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
  static const std::string sql = fmt::format(R"sql(SELECT {0}
FROM runs r
WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id AND {1})
                  OR EXISTS (SELECT 1 FROM failures x WHERE x.run_id = r.id AND {1}))
  AND (?2 IS NULL OR r.started_at >= ?2)
ORDER BY r.id DESC LIMIT ?3)sql",
                                             columns::joined(columns::kRunRead), op_matches("x.op"));
  return select_rows(
      *impl_, sql, [&](sqlite::Statement& s) { bind_query(s, query); }, read_run);
}

Expected<std::vector<StoredResult>> Store::list_results(const Query& query) const {
  std::lock_guard lock(impl_->mutex);
  static const std::string sql = fmt::format(R"sql(SELECT {0}
FROM results x JOIN runs r ON r.id = x.run_id
WHERE (?1 IS NULL OR {1}) AND (?2 IS NULL OR x.created_at >= ?2)
ORDER BY x.id DESC LIMIT ?3)sql",
                                             columns::joined(columns::kResultRead), op_matches("x.op"));
  return select_rows(
      *impl_, sql, [&](sqlite::Statement& s) { bind_query(s, query); }, read_result);
}

Expected<std::vector<StoredFailure>> Store::list_failures(const Query& query) const {
  std::lock_guard lock(impl_->mutex);
  static const std::string where_order = fmt::format(
      "WHERE (?1 IS NULL OR {}) AND (?2 IS NULL OR f.created_at >= ?2) ORDER BY f.id DESC LIMIT ?3",
      op_matches("f.op"));
  return select_failures(*impl_, where_order, [&](sqlite::Statement& s) { bind_query(s, query); });
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
