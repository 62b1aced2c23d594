// Baselines (a tag naming one JSON document the engine defines) and artifact lint metrics.
// The store keeps the documents as given; their content is specified by the engine and lint.
#include <fmt/format.h>

#include "store/store_impl.hpp"
#include "util/json_text.hpp"

namespace gpuemu::store {
namespace {

Expected<nlohmann::json> parse_document(const std::string& text, const std::string& what) {
  auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded()) {
    return fail(ErrorKind::parse, fmt::format("{} is not valid JSON; store it again to replace it", what));
  }
  return document;
}

// One artifact_metrics row, written with `insert` (kArtifactMetricsInsert) and reset for the next.
constexpr const char* kArtifactMetricsInsert =
    "INSERT INTO artifact_metrics (kernel, source, metrics, run_id, baseline_tag, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

Expected<void> insert_artifact_metrics(sqlite::Statement& insert, const ArtifactMetrics& metrics,
                                       Millis now) {
  insert.bind(1, metrics.kernel)
      .bind(2, metrics.source)
      .bind(3, util::dump_json(metrics.metrics, -1))
      .bind(4, metrics.run_id)
      .bind(5, metrics.baseline_tag)
      .bind(6, now);
  TRY(insert.run());
  insert.reset();
  return {};
}

}  // namespace

Expected<void> Store::store_baseline(const std::string& tag, const nlohmann::json& document) {
  if (tag.empty()) return fail(ErrorKind::usage, "a baseline tag cannot be empty; name it, e.g. `main`");
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  auto upsert = TRY(impl_->db.prepare(
      "INSERT INTO baselines (tag, created_at, document) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (tag) DO UPDATE SET created_at = excluded.created_at, document = excluded.document"));
  upsert.bind(1, tag).bind(2, impl_->now()).bind(3, util::dump_json(document, -1));
  TRY(upsert.run());
  TRY(transaction.commit());
  return {};
}

Expected<std::optional<Baseline>> Store::get_baseline(const std::string& tag) const {
  std::lock_guard lock(impl_->mutex);
  auto select = TRY(impl_->db.prepare("SELECT created_at, document FROM baselines WHERE tag = ?1"));
  select.bind(1, tag);
  if (!TRY(select.step())) return std::optional<Baseline>();
  Baseline baseline{tag, select.column_int(0), {}};
  baseline.document =
      TRY(parse_document(select.column_text(1), fmt::format("baseline '{}' in {}", tag, file().string())));
  return std::optional<Baseline>(std::move(baseline));
}

Expected<std::vector<BaselineInfo>> Store::list_baselines() const {
  std::lock_guard lock(impl_->mutex);
  auto select = TRY(impl_->db.prepare("SELECT tag, created_at FROM baselines ORDER BY created_at DESC, tag"));
  return sqlite::read_rows(select, [](const sqlite::Statement& row) -> Expected<BaselineInfo> {
    return BaselineInfo{row.column_text(0), row.column_int(1)};
  });
}

Expected<bool> Store::delete_baseline(const std::string& tag) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  auto remove = TRY(impl_->db.prepare("DELETE FROM baselines WHERE tag = ?1"));
  remove.bind(1, tag);
  TRY(remove.run());
  const bool existed = sqlite3_changes(impl_->db.handle()) > 0;
  TRY(transaction.commit());
  return existed;
}

Expected<std::int64_t> Store::record_artifact_metrics(const ArtifactMetrics& metrics) {
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  auto insert = TRY(impl_->db.prepare(kArtifactMetricsInsert));
  TRY(insert_artifact_metrics(insert, metrics, impl_->now()));
  const std::int64_t id = sqlite3_last_insert_rowid(impl_->db.handle());
  TRY(transaction.commit());
  return id;
}

Expected<std::vector<ArtifactMetrics>> Store::list_artifact_metrics(
    const std::optional<RunId>& run, const std::optional<std::string>& tag) const {
  std::lock_guard lock(impl_->mutex);
  auto select = TRY(impl_->db.prepare(
      "SELECT id, kernel, source, metrics, run_id, baseline_tag, created_at FROM artifact_metrics "
      "WHERE (?1 IS NULL OR run_id = ?1) AND (?2 IS NULL OR baseline_tag = ?2) ORDER BY id DESC"));
  select.bind(1, run).bind(2, tag);
  const std::string file = impl_->db.file().string();
  return sqlite::read_rows(select, [&](const sqlite::Statement& row) -> Expected<ArtifactMetrics> {
    ArtifactMetrics m;
    m.id = row.column_int(0);
    m.kernel = row.column_text(1);
    m.source = row.column_text(2);
    m.metrics = TRY(parse_document(row.column_text(3), fmt::format("artifact metrics {} in {}", m.id, file)));
    m.run_id = row.column_optional_int(4);
    if (!row.column_is_null(5)) m.baseline_tag = row.column_text(5);
    m.created_at = row.column_int(6);
    return m;
  });
}

Expected<void> Store::record_artifact_baseline(const std::string& tag, std::vector<ArtifactMetrics> rows) {
  if (tag.empty()) return fail(ErrorKind::usage, "a baseline tag must not be empty, e.g. 'main'");
  std::lock_guard lock(impl_->mutex);
  auto transaction = TRY(sqlite::WriteTransaction::begin(impl_->db));
  auto insert = TRY(impl_->db.prepare(kArtifactMetricsInsert));
  for (ArtifactMetrics& row : rows) {
    row.run_id.reset();
    row.baseline_tag = tag;
    TRY(insert_artifact_metrics(insert, row, impl_->now()));
  }
  TRY(transaction.commit());
  return {};
}

Expected<std::map<std::string, nlohmann::json>> Store::artifact_baseline(const std::string& tag) const {
  std::map<std::string, nlohmann::json> newest;
  for (ArtifactMetrics& row : TRY(list_artifact_metrics(std::nullopt, tag))) {
    newest.try_emplace(row.kernel, std::move(row.metrics));  // rows come newest first
  }
  return newest;
}

}  // namespace gpuemu::store
