// The SQLite RAII layer (see sqlite.hpp): error messages that name the database file, NaN as
// NULL, the per-connection statement cache, and the busy retry loop that keeps concurrent
// writers from failing with "locked".
#include "store/sqlite.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace gpuemu::store::sqlite {
namespace {

bool is_busy(int code) {
  return (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED;
}

// Sleeps a little longer each time, up to 50 ms, so waiting writers do not spin.
void back_off(int attempt) {
  const int ms = attempt < 6 ? (1 << attempt) : 50;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

// SQL text -> its idle prepared statement, or nullptr while a Statement has it out. Entries are
// never erased before the connection closes, so a Statement may keep a pointer to its slot
// (unordered_map elements do not move on rehash).
struct StatementCache {
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view sql) const { return std::hash<std::string_view>{}(sql); }
  };
  std::unordered_map<std::string, sqlite3_stmt*, Hash, std::equal_to<>> slots;
};

void Connection::DropCache::operator()(StatementCache* cache) const {
  for (auto& [sql, stmt] : cache->slots) sqlite3_finalize(stmt);  // finalize(nullptr) is a no-op
  delete cache;
}

void Statement::Release::operator()(sqlite3_stmt* stmt) const {
  if (slot == nullptr) {
    sqlite3_finalize(stmt);
    return;
  }
  // reset ends a half-read SELECT (releasing its read lock) just as finalize did.
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  *slot = stmt;
}

Connection::Connection(std::filesystem::path file, sqlite3* db)
    : file_(std::move(file)), db_(db), cache_(new StatementCache) {}

Expected<Connection> Connection::open(const std::filesystem::path& file) {
  sqlite3* raw = nullptr;
  // NOMUTEX: a Connection is used by one thread at a time (the Store holds a mutex).
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
  Connection connection(file, raw);
  if (rc != SQLITE_OK) {
    if (raw == nullptr) {
      return fail(ErrorKind::io,
                  fmt::format("cannot open the gpuemu database {}: out of memory", file.string()));
    }
    return std::unexpected(connection.error("open", rc));
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(kBusyTimeout.count()));
  return connection;
}

Error Connection::error(std::string_view what, int code) const {
  const char* detail = db_ ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(code);
  std::string message = fmt::format("gpuemu database {}: could not {}: {} ({})", file_.string(), what, detail,
                                    sqlite3_errstr(code));
  if (is_busy(code)) {
    message += "; another gpuemu process kept it locked too long: retry when it has finished";
  } else if ((code & 0xff) == SQLITE_READONLY || (code & 0xff) == SQLITE_CANTOPEN ||
             (code & 0xff) == SQLITE_PERM) {
    message += "; check that the file and its directory are writable, or set GPUEMU_HOME elsewhere";
  } else if ((code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_IOERR) {
    message += "; check free disk space and the file system";
  }
  return Error{ErrorKind::io, std::move(message)};
}

Expected<Statement> Connection::prepare(std::string_view sql) const {
  auto& slots = cache_->slots;
  auto it = slots.find(sql);
  if (it != slots.end() && it->second != nullptr) {
    sqlite3_stmt* idle = std::exchange(it->second, nullptr);
    return Statement(this, idle, &it->second);
  }
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return std::unexpected(error(fmt::format("prepare `{}`", sql), rc));
  }
  // A text already in use (a nested query of the same SQL) gets a statement of its own, finalized
  // after use; so does any text once the cache is full. raw is null for SQL with no statement.
  if (it == slots.end() && raw != nullptr && slots.size() < kMaxCachedStatements) {
    it = slots.emplace(std::string(sql), nullptr).first;
    return Statement(this, raw, &it->second);
  }
  return Statement(this, raw, nullptr);
}

Expected<void> Connection::exec(std::string_view sql) const {
  auto statement = TRY(prepare(sql));
  while (TRY(statement.step())) {
  }
  return {};
}

Expected<void> Connection::exec_script(const std::string& sql) const {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) return std::unexpected(error("apply a schema migration", rc));
  return {};
}

Expected<std::int64_t> Connection::query_int(std::string_view sql) const {
  auto statement = TRY(prepare(sql));
  if (!TRY(statement.step())) return fail(ErrorKind::internal, fmt::format("`{}` returned no row", sql));
  return statement.column_int(0);
}

Expected<std::string> Connection::query_text(std::string_view sql) const {
  auto statement = TRY(prepare(sql));
  if (!TRY(statement.step())) return fail(ErrorKind::internal, fmt::format("`{}` returned no row", sql));
  return statement.column_text(0);
}

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  if (rc != SQLITE_OK && !bind_failed_) {
    bind_failed_ = true;
    bind_error_ = connection_->error("bind a parameter", rc);
  }
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (std::isnan(value)) return bind_null(index);
  const int rc = sqlite3_bind_double(stmt_.get(), index, value);
  if (rc != SQLITE_OK && !bind_failed_) {
    bind_failed_ = true;
    bind_error_ = connection_->error("bind a parameter", rc);
  }
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  const int rc =
      sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && !bind_failed_) {
    bind_failed_ = true;
    bind_error_ = connection_->error("bind a parameter", rc);
  }
  return *this;
}

Statement& Statement::bind(int index, std::span<const std::byte> blob) {
  // A zero-length blob is still a blob (not NULL): an empty snapshot differs from none.
  static const std::byte empty{};
  const void* data = blob.empty() ? &empty : blob.data();
  const int rc = sqlite3_bind_blob64(stmt_.get(), index, data, blob.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && !bind_failed_) {
    bind_failed_ = true;
    bind_error_ = connection_->error("bind a parameter", rc);
  }
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_.get(), index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  return value ? bind(index, std::string_view(*value)) : bind_null(index);
}

Expected<bool> Statement::step() {
  if (bind_failed_) return std::unexpected(bind_error_);
  const auto deadline = std::chrono::steady_clock::now() + kRetryBudget;
  for (int attempt = 0;; ++attempt) {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) {
      returned_rows_ = true;
      return true;
    }
    if (rc == SQLITE_DONE) return false;
    if (is_busy(rc) && !returned_rows_ && std::chrono::steady_clock::now() < deadline) {
      sqlite3_reset(stmt_.get());
      back_off(attempt);
      continue;
    }
    const char* sql = sqlite3_sql(stmt_.get());
    std::string what = fmt::format("run `{}`", sql ? std::string_view(sql).substr(0, 60) : "");
    Error error = connection_->error(what, rc);
    sqlite3_reset(stmt_.get());
    return std::unexpected(std::move(error));
  }
}

Expected<void> Statement::run() {
  while (TRY(step())) {
  }
  return {};
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  returned_rows_ = false;
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_.get(), index) == SQLITE_NULL;
}

std::int64_t Statement::column_int(int index) const {
  return sqlite3_column_int64(stmt_.get(), index);
}

double Statement::column_double(int index) const {
  if (column_is_null(index)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_.get(), index);
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_.get(), index);
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::vector<std::byte> Statement::column_blob(int index) const {
  const auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt_.get(), index));
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (data == nullptr) return {};
  return std::vector<std::byte>(data, data + size);
}

std::optional<std::int64_t> Statement::column_optional_int(int index) const {
  if (column_is_null(index)) return std::nullopt;
  return column_int(index);
}

Expected<WriteTransaction> WriteTransaction::begin(const Connection& connection) {
  TRY(connection.exec("BEGIN IMMEDIATE"));
  return WriteTransaction(&connection);
}

WriteTransaction::WriteTransaction(WriteTransaction&& other) noexcept : connection_(other.connection_) {
  other.connection_ = nullptr;
}

WriteTransaction::~WriteTransaction() {
  if (connection_ != nullptr && !sqlite3_get_autocommit(connection_->handle())) {
    sqlite3_exec(connection_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Expected<void> WriteTransaction::commit() {
  // A COMMIT that fails with SQLITE_BUSY leaves the transaction open; step() retries it.
  TRY(connection_->exec("COMMIT"));
  connection_ = nullptr;
  return {};
}

}  // namespace gpuemu::store::sqlite
