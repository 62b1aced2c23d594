// A thin RAII layer over the SQLite C API: one connection, prepared statements (kept per
// connection for reuse), and the retry on SQLITE_BUSY that lets the CLI and the daemon write one
// database at the same time.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::store::sqlite {

// How long a writer waits for another process's transaction before giving up. SQLite's own busy
// handler covers most waits; our retry loop covers the cases it does not (e.g. WAL recovery).
inline constexpr std::chrono::milliseconds kBusyTimeout{10'000};
inline constexpr std::chrono::milliseconds kRetryBudget{60'000};

class Statement;
struct StatementCache;

// How many distinct SQL texts a connection keeps prepared. The store has a few dozen; the bound
// only matters for SQL built from data, which then is prepared anew each time as before.
inline constexpr std::size_t kMaxCachedStatements = 64;

// One open connection to one database file; errors name that file.
//
// prepare() reuses an earlier prepared statement of the same SQL text when none of that text is in
// use (parsing dominates a short query's cost); the statement comes back reset and with its
// bindings cleared, as if new. Like the connection itself, this is not thread-safe: use a
// Connection from one thread at a time (the Store holds a mutex), and destroy every Statement
// before its Connection.
class Connection {
 public:
  static Expected<Connection> open(const std::filesystem::path& file);

  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;

  const std::filesystem::path& file() const { return file_; }
  sqlite3* handle() const { return db_.get(); }

  // A statement for the first SQL statement in `sql`.
  Expected<Statement> prepare(std::string_view sql) const;
  // Runs SQL with no parameters and no rows wanted (DDL, PRAGMA setters, BEGIN/COMMIT).
  Expected<void> exec(std::string_view sql) const;
  // Runs several ;-separated statements (migrations). No busy retry: call it inside a
  // WriteTransaction, which already holds the write lock.
  Expected<void> exec_script(const std::string& sql) const;
  // Runs a query expected to return one integer (PRAGMA user_version, count(*), ...).
  Expected<std::int64_t> query_int(std::string_view sql) const;
  Expected<std::string> query_text(std::string_view sql) const;

  // An Error that names the file, says what failed, and SQLite's own words for why.
  Error error(std::string_view what, int code) const;

 private:
  struct Close {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  struct DropCache {
    void operator()(StatementCache* cache) const;  // finalizes the idle statements
  };
  Connection(std::filesystem::path file, sqlite3* db);

  std::filesystem::path file_;
  std::unique_ptr<sqlite3, Close> db_;
  // Declared after db_, so its statements are finalized before the database closes.
  std::unique_ptr<StatementCache, DropCache> cache_;
};

// A prepared statement. step() retries SQLITE_BUSY until kRetryBudget has passed; a statement
// that already returned rows is never retried (the caller would see rows twice).
class Statement {
 public:
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  // NaN binds as NULL (SQLite has no NaN); column_double reads NULL back as NaN.
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::span<const std::byte> blob);
  Statement& bind_null(int index);
  Statement& bind(int index, const std::optional<std::int64_t>& value);
  Statement& bind(int index, const std::optional<std::string>& value);

  // true: a row is ready; false: done.
  Expected<bool> step();
  // Steps a statement that returns no rows.
  Expected<void> run();
  void reset();

  bool column_is_null(int index) const;
  std::int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  std::vector<std::byte> column_blob(int index) const;
  std::optional<std::int64_t> column_optional_int(int index) const;

 private:
  friend class Connection;
  // Puts the statement back in its connection's cache slot (reset, bindings cleared) when it has
  // one, else finalizes it.
  struct Release {
    sqlite3_stmt** slot = nullptr;
    void operator()(sqlite3_stmt* stmt) const;
  };
  Statement(const Connection* connection, sqlite3_stmt* stmt, sqlite3_stmt** slot)
      : connection_(connection), stmt_(stmt, Release{slot}) {}

  const Connection* connection_;
  std::unique_ptr<sqlite3_stmt, Release> stmt_;
  Error bind_error_;
  bool bind_failed_ = false;
  bool returned_rows_ = false;
};

// Steps `statement` to its end and decodes each row with `read` (const Statement& -> Expected<Row>),
// in the order SQLite returns them: the select-and-read loop of every list read. The first row that
// does not decode is the error.
template <class Read>
auto read_rows(Statement& statement, Read&& read)
    -> Expected<std::vector<typename std::invoke_result_t<Read&, const Statement&>::value_type>> {
  std::vector<typename std::invoke_result_t<Read&, const Statement&>::value_type> rows;
  while (TRY(statement.step())) rows.push_back(TRY(read(std::as_const(statement))));
  return rows;
}

// A write transaction taken with BEGIN IMMEDIATE (so it never has to upgrade a read lock, the
// one case where SQLite returns SQLITE_BUSY without waiting). Rolls back unless committed.
class WriteTransaction {
 public:
  static Expected<WriteTransaction> begin(const Connection& connection);
  WriteTransaction(WriteTransaction&& other) noexcept;
  WriteTransaction& operator=(WriteTransaction&&) = delete;
  ~WriteTransaction();

  Expected<void> commit();

 private:
  explicit WriteTransaction(const Connection* connection) : connection_(connection) {}
  const Connection* connection_;
};

}  // namespace gpuemu::store::sqlite
