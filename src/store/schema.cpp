// Recognising a gpuemu database and migrating it (see schema.hpp and docs/store.md). A file
// that is not ours is never written to: every check below only reads.
#include "store/schema.hpp"

#include <array>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sqlite3.h>

namespace gpuemu::store {
namespace {

// Migration N (1-based) brings user_version N-1 to N. Append only; never edit a released entry.
// Seeds are decimal TEXT (exact u64); timestamps are INTEGER milliseconds since the Unix epoch;
// a NULL in a REAL statistics column means NaN (SQLite cannot store NaN).
const std::vector<std::string>& migrations() {
  static const std::vector<std::string> list = {
      // 1: the initial schema.
      R"sql(
CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  command       TEXT    NOT NULL,
  master_seed   TEXT    NOT NULL,
  config_digest TEXT    NOT NULL,
  project       TEXT    NOT NULL,
  started_at    INTEGER NOT NULL,
  finished_at   INTEGER,
  duration_secs REAL,
  partial       INTEGER NOT NULL DEFAULT 0,
  passed        INTEGER
);
CREATE INDEX runs_started ON runs(started_at);

CREATE TABLE results (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  op             TEXT    NOT NULL,
  source         TEXT    NOT NULL,
  dtype          INTEGER NOT NULL,
  total          INTEGER NOT NULL,
  passed         INTEGER NOT NULL,
  failed         INTEGER NOT NULL,
  errors         INTEGER NOT NULL,
  max_abs        REAL,
  max_rel        REAL,
  max_ulp        REAL,
  tolerance_used REAL,
  atol           REAL,
  rtol           REAL,
  created_at     INTEGER NOT NULL,
  UNIQUE (run_id, op, dtype)
);
CREATE INDEX results_op ON results(op, id);

CREATE TABLE failures (
  id                INTEGER PRIMARY KEY,
  run_id            INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  op                TEXT    NOT NULL,
  seed              TEXT    NOT NULL,
  config_digest     TEXT    NOT NULL,
  dtype             INTEGER NOT NULL,
  layout            INTEGER NOT NULL,
  distribution      INTEGER NOT NULL,
  dims              TEXT    NOT NULL,
  shapes            TEXT    NOT NULL,
  kind              INTEGER NOT NULL,
  max_abs           REAL,
  max_rel           REAL,
  max_ulp           REAL,
  mismatches        INTEGER NOT NULL,
  elements          INTEGER NOT NULL,
  mismatch_fraction REAL,
  tolerance_used    REAL,
  worst             TEXT    NOT NULL,
  message           TEXT    NOT NULL,
  stderr_tail       TEXT    NOT NULL,
  atol              REAL,
  rtol              REAL,
  minimized_from    INTEGER REFERENCES failures(id) ON DELETE SET NULL,
  created_at        INTEGER NOT NULL
);
CREATE INDEX failures_seed ON failures(seed, id);
CREATE INDEX failures_op ON failures(op, id);
CREATE INDEX failures_run ON failures(run_id);
CREATE INDEX failures_minimized_from ON failures(minimized_from);

CREATE TABLE snapshots (
  failure_id INTEGER PRIMARY KEY REFERENCES failures(id) ON DELETE CASCADE,
  format     INTEGER NOT NULL,
  bytes      BLOB    NOT NULL
);

CREATE TABLE baselines (
  tag        TEXT    PRIMARY KEY,
  created_at INTEGER NOT NULL,
  document   TEXT    NOT NULL
);

CREATE TABLE artifact_metrics (
  id           INTEGER PRIMARY KEY,
  kernel       TEXT    NOT NULL,
  source       TEXT    NOT NULL,
  metrics      TEXT    NOT NULL,
  run_id       INTEGER REFERENCES runs(id) ON DELETE CASCADE,
  baseline_tag TEXT,
  created_at   INTEGER NOT NULL
);
CREATE INDEX artifact_metrics_run ON artifact_metrics(run_id);
CREATE INDEX artifact_metrics_baseline ON artifact_metrics(baseline_tag);
)sql",
  };
  return list;
}

std::string untouched_advice(const std::filesystem::path& file) {
  return fmt::format(
      "gpuemu left it untouched: move it aside (mv '{0}' '{0}.bad') and gpuemu will create a new store "
      "there, "
      "or point GPUEMU_HOME at another directory",
      file.string());
}

struct Identity {
  std::int64_t application_id = 0;
  std::int64_t user_version = 0;
  std::int64_t objects = 0;  // tables, indexes, views, triggers
};

Expected<Identity> read_identity(const sqlite::Connection& connection) {
  Identity identity;
  auto corrupt = [&](const Error& error) {
    return fail(ErrorKind::io,
                fmt::format("{} is not a readable SQLite database ({}); {}", connection.file().string(),
                            error.message, untouched_advice(connection.file())));
  };
  // The three values must come from one snapshot: read one by one, they could straddle another
  // process's migration commit (application_id 0 yet a full schema: "another application").
  const bool own_transaction = sqlite3_get_autocommit(connection.handle()) != 0;
  if (own_transaction) {
    if (auto begun = connection.exec("BEGIN"); !begun) return corrupt(begun.error());
  }
  auto app = connection.query_int("PRAGMA application_id");
  auto version = app ? connection.query_int("PRAGMA user_version") : Expected<std::int64_t>(0);
  auto objects =
      version ? connection.query_int("SELECT count(*) FROM sqlite_schema") : Expected<std::int64_t>(0);
  if (own_transaction) (void)connection.exec("COMMIT");
  if (!app) return corrupt(app.error());
  if (!version) return corrupt(version.error());
  if (!objects) return corrupt(objects.error());
  identity.application_id = *app;
  identity.user_version = *version;
  identity.objects = *objects;
  return identity;
}

Expected<void> check(const sqlite::Connection& connection, const Identity& identity) {
  const auto& file = connection.file();
  if (identity.application_id == kApplicationId) {
    if (identity.user_version > latest_schema_version()) {
      return fail(
          ErrorKind::config,
          fmt::format(
              "{} was written by a newer gpuemu (store schema version {}; this gpuemu knows up to {}); "
              "upgrade gpuemu, or point GPUEMU_HOME at another directory to keep both",
              file.string(), identity.user_version, latest_schema_version()));
    }
    return {};
  }
  if (identity.application_id == 0 && identity.objects == 0 && identity.user_version == 0) return {};
  return fail(
      ErrorKind::config,
      fmt::format("{} is a SQLite database of another application (application_id {:#x}, {} schema objects), "
                  "not a gpuemu store; {}",
                  file.string(), static_cast<std::uint32_t>(identity.application_id), identity.objects,
                  untouched_advice(file)));
}

}  // namespace

std::int64_t latest_schema_version() {
  return static_cast<std::int64_t>(migrations().size());
}

Expected<void> check_file_header(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return {};
  if (!std::filesystem::is_regular_file(file, ec)) {
    return fail(ErrorKind::io, fmt::format("{} is not a regular file, so it cannot hold the gpuemu store; "
                                           "remove it or point GPUEMU_HOME at another directory",
                                           file.string()));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return fail(ErrorKind::io,
                fmt::format("cannot read the gpuemu database {}; check its permissions", file.string()));
  }
  std::array<char, 100> header{};
  in.read(header.data(), header.size());
  const auto got = in.gcount();
  if (got == 0) return {};  // an empty file is an empty database to SQLite: it becomes a new store
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with the NUL
  if (got < static_cast<std::streamsize>(header.size()) ||
      std::memcmp(header.data(), kMagic, sizeof kMagic) != 0) {
    return fail(ErrorKind::io,
                fmt::format("{} is not a SQLite database (corrupt or truncated: {} header bytes do not "
                            "match SQLite's); {}",
                            file.string(), got, untouched_advice(file)));
  }
  // Offset 68: application_id, big-endian. A foreign non-zero id is refused before SQLite opens
  // the file, so not even a hot-journal rollback happens on someone else's database.
  const auto byte = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(header[i])); };
  const std::uint32_t app = byte(68) << 24 | byte(69) << 16 | byte(70) << 8 | byte(71);
  if (app != 0 && app != static_cast<std::uint32_t>(kApplicationId)) {
    return fail(ErrorKind::config,
                fmt::format("{} is a SQLite database of another application (application_id "
                            "{:#x}), not a gpuemu store; {}",
                            file.string(), app, untouched_advice(file)));
  }
  return {};
}

Expected<void> check_identity(const sqlite::Connection& connection) {
  const auto identity = TRY(read_identity(connection));
  return check(connection, identity);
}

Expected<void> migrate(const sqlite::Connection& connection) {
  const auto before = TRY(read_identity(connection));
  TRY(check(connection, before));
  if (before.application_id == kApplicationId && before.user_version == latest_schema_version()) return {};

  auto transaction = TRY(sqlite::WriteTransaction::begin(connection));
  // Another process may have migrated (or, absurdly, claimed the file) while we waited.
  const auto identity = TRY(read_identity(connection));
  TRY(check(connection, identity));
  const auto& list = migrations();
  for (auto version = identity.user_version; version < latest_schema_version(); ++version) {
    TRY(connection.exec_script(list[static_cast<std::size_t>(version)]));
  }
  TRY(connection.exec(fmt::format("PRAGMA application_id = {}", kApplicationId)));
  TRY(connection.exec(fmt::format("PRAGMA user_version = {}", latest_schema_version())));
  TRY(transaction.commit());
  return {};
}

}  // namespace gpuemu::store
