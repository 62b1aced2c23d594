// The SQLite layer's statement cache: a reused statement behaves like a new one (no bindings, no
// half-read rows, no leftover error), nested use of one SQL text works, and the cache is bounded.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/sqlite.hpp"
#include "store_test_support.hpp"

namespace gpuemu::store::sqlite {
namespace {

using store::testing::TempDir;

// Statements the connection holds: cached idle ones plus those in use.
int live_statements(const Connection& db) {
  int count = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db.handle(), nullptr); s != nullptr;
       s = sqlite3_next_stmt(db.handle(), s)) {
    ++count;
  }
  return count;
}

bool any_statement_busy(const Connection& db) {
  for (sqlite3_stmt* s = sqlite3_next_stmt(db.handle(), nullptr); s != nullptr;
       s = sqlite3_next_stmt(db.handle(), s)) {
    if (sqlite3_stmt_busy(s)) return true;
  }
  return false;
}

class SqliteStatementCache : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Connection::open(dir_.path() / "cache.db");
    ASSERT_TRUE(opened) << opened.error().message;
    db_.emplace(std::move(*opened));
    ASSERT_TRUE(db_->exec("CREATE TABLE t (a INTEGER UNIQUE)"));
    ASSERT_TRUE(db_->exec("INSERT INTO t (a) VALUES (1), (2), (3)"));
  }
  void TearDown() override { db_.reset(); }

  Connection& db() { return *db_; }

 private:
  TempDir dir_;
  std::optional<Connection> db_;
};

TEST_F(SqliteStatementCache, AReusedStatementHasNoBindingsLeft) {
  const int before = live_statements(db());
  {
    auto select = db().prepare("SELECT ?1");
    ASSERT_TRUE(select) << select.error().message;
    select->bind(1, 7);
    ASSERT_TRUE(*select->step());
    EXPECT_EQ(select->column_int(0), 7);
  }
  EXPECT_EQ(live_statements(db()), before + 1) << "the statement should stay prepared for reuse";
  auto again = db().prepare("SELECT ?1");
  ASSERT_TRUE(again);
  EXPECT_EQ(live_statements(db()), before + 1) << "the cached statement should be reused";
  ASSERT_TRUE(*again->step());
  EXPECT_TRUE(again->column_is_null(0));
}

TEST_F(SqliteStatementCache, AHalfReadSelectEndsWhenDropped) {
  {
    auto select = db().prepare("SELECT a FROM t ORDER BY a");
    ASSERT_TRUE(select);
    ASSERT_TRUE(*select->step());
    EXPECT_EQ(select->column_int(0), 1);
    EXPECT_TRUE(any_statement_busy(db()));
  }
  EXPECT_FALSE(any_statement_busy(db())) << "an idle cached statement must not hold a read transaction";
  auto select = db().prepare("SELECT a FROM t ORDER BY a");
  ASSERT_TRUE(select);
  ASSERT_TRUE(*select->step());
  EXPECT_EQ(select->column_int(0), 1) << "a reused SELECT starts from its first row";
}

TEST_F(SqliteStatementCache, OneSqlTextCanBeInUseTwice) {
  const std::string sql = "SELECT a FROM t ORDER BY a";
  const int before = live_statements(db());
  {
    auto outer = db().prepare(sql);
    ASSERT_TRUE(outer);
    ASSERT_TRUE(*outer->step());
    auto inner = db().prepare(sql);
    ASSERT_TRUE(inner);
    std::vector<std::int64_t> inner_rows;
    while (*inner->step()) inner_rows.push_back(inner->column_int(0));
    EXPECT_EQ(inner_rows, (std::vector<std::int64_t>{1, 2, 3}));
    ASSERT_TRUE(*outer->step());
    EXPECT_EQ(outer->column_int(0), 2) << "the nested query must not disturb the outer one";
  }
  EXPECT_EQ(live_statements(db()), before + 1) << "the second statement of one text is finalized";
}

TEST_F(SqliteStatementCache, AStatementThatFailedCanBeReused) {
  const std::string sql = "INSERT INTO t (a) VALUES (?1)";
  {
    auto insert = db().prepare(sql);
    ASSERT_TRUE(insert);
    insert->bind(1, 1);
    auto ran = insert->run();
    ASSERT_FALSE(ran);
    EXPECT_NE(ran.error().message.find("UNIQUE"), std::string::npos) << ran.error().message;
  }
  auto insert = db().prepare(sql);
  ASSERT_TRUE(insert);
  insert->bind(1, 4);
  auto ran = insert->run();
  EXPECT_TRUE(ran) << ran.error().message;
  EXPECT_EQ(*db().query_int("SELECT count(*) FROM t"), 4);
}

TEST_F(SqliteStatementCache, KeepsAtMostTheBoundAndStillRunsEveryText) {
  const int before = live_statements(db());
  const int texts = static_cast<int>(kMaxCachedStatements) + 20;
  for (int i = 0; i < texts; ++i) {
    auto value = db().query_int(fmt::format("SELECT {}", i));
    ASSERT_TRUE(value) << value.error().message;
    EXPECT_EQ(*value, i);
  }
  EXPECT_LE(live_statements(db()), static_cast<int>(kMaxCachedStatements));
  EXPECT_GT(live_statements(db()), before);
  EXPECT_EQ(*db().query_int("SELECT 3"), 3) << "a cached text still runs after the cache is full";
}

}  // namespace
}  // namespace gpuemu::store::sqlite
