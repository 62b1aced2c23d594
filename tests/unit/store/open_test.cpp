// Opening the store: creation with private directories, migrations from an empty file, and
// refusal (without changing a byte) of garbage, foreign, corrupt and newer-version databases.
#include <sys/stat.h>

#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "store/schema.hpp"
#include "store/store.hpp"
#include "store_test_support.hpp"

namespace gpuemu::store {
namespace {

using testing::file_bytes;
using testing::raw_exec;
using testing::raw_query_text;
using testing::TempDir;
using testing::write_bytes;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StoreOpen, CreatesPrivateParentsAndAnUpToDateWalDatabase) {
  TempDir dir;
  const auto file = dir.path() / "home" / "db" / "gpuemu.db";
  {
    auto store = Store::open(file);
    ASSERT_TRUE(store) << store.error().message;
    EXPECT_EQ(store->file(), file);
  }
  for (const auto& created : {dir.path() / "home", dir.path() / "home" / "db"}) {
    struct stat info {};
    ASSERT_EQ(::stat(created.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u) << created;
  }
  EXPECT_EQ(raw_query_text(file, "PRAGMA application_id"), std::to_string(kApplicationId));
  EXPECT_EQ(raw_query_text(file, "PRAGMA user_version"), std::to_string(latest_schema_version()));
  EXPECT_EQ(raw_query_text(file, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_query_text(file,
                           "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
                           "('runs','results','failures','snapshots','baselines','artifact_metrics')"),
            "6");
}

TEST(StoreOpen, MigratesAnEmptyFileAndReopensWithData) {
  TempDir dir;
  const auto file = dir.path() / "gpuemu.db";
  write_bytes(file, {});
  {
    auto store = Store::open(file);
    ASSERT_TRUE(store) << store.error().message;
    ASSERT_TRUE(store->store_baseline("main", {{"ops", 1}}));
  }
  auto again = Store::open(file);
  ASSERT_TRUE(again) << again.error().message;
  auto baseline = again->get_baseline("main");
  ASSERT_TRUE(baseline && baseline->has_value());
  EXPECT_EQ((*baseline)->document, (nlohmann::json{{"ops", 1}}));
  EXPECT_EQ(raw_query_text(file, "PRAGMA user_version"), std::to_string(latest_schema_version()));
}

TEST(StoreOpen, RefusesRandomBytesWithoutTouchingThem) {
  TempDir dir;
  const auto file = dir.path() / "gpuemu.db";
  std::mt19937 rng(7);
  std::vector<char> garbage(8192);
  for (auto& c : garbage) c = static_cast<char>(rng());
  write_bytes(file, garbage);

  auto store = Store::open(file);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().kind, ErrorKind::io);
  EXPECT_TRUE(contains(store.error().message, file.string() + " is not a SQLite database"))
      << store.error().message;
  EXPECT_TRUE(contains(store.error().message, "GPUEMU_HOME"));
  EXPECT_EQ(file_bytes(file), garbage);
}

TEST(StoreOpen, RefusesATruncatedOrDamagedSqliteFileWithoutTouchingIt) {
  TempDir dir;
  const auto good = dir.path() / "good.db";
  raw_exec(good, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  const auto original = file_bytes(good);

  const auto truncated = dir.path() / "truncated.db";
  write_bytes(truncated, std::vector<char>(original.begin(), original.begin() + 60));
  auto r1 = Store::open(truncated);
  ASSERT_FALSE(r1);
  EXPECT_TRUE(contains(r1.error().message, "corrupt or truncated")) << r1.error().message;
  EXPECT_EQ(file_bytes(truncated).size(), 60u);

  // A valid header with a nonsense page size behind it: SQLite itself must refuse it.
  auto damaged_bytes = original;
  damaged_bytes[16] = 0x01;
  damaged_bytes[17] = 0x23;
  const auto damaged = dir.path() / "damaged.db";
  write_bytes(damaged, damaged_bytes);
  auto r2 = Store::open(damaged);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().kind, ErrorKind::io);
  EXPECT_TRUE(contains(r2.error().message, damaged.string())) << r2.error().message;
  EXPECT_TRUE(contains(r2.error().message, "left it untouched")) << r2.error().message;
  EXPECT_EQ(file_bytes(damaged), damaged_bytes);
}

TEST(StoreOpen, RefusesAForeignDatabaseWithoutTouchingIt) {
  TempDir dir;
  const auto plain = dir.path() / "plain.db";
  raw_exec(
      plain,
      "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'x');");
  const auto plain_bytes = file_bytes(plain);
  auto r1 = Store::open(plain);
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().kind, ErrorKind::config);
  EXPECT_TRUE(contains(r1.error().message, plain.string() + " is a SQLite database of another application"))
      << r1.error().message;
  EXPECT_EQ(file_bytes(plain), plain_bytes);

  // Another application that set its own application_id (refused before SQLite opens it).
  const auto other = dir.path() / "other.db";
  raw_exec(other, "PRAGMA application_id = 1234; CREATE TABLE t(x);");
  const auto other_bytes = file_bytes(other);
  auto r2 = Store::open(other);
  ASSERT_FALSE(r2);
  EXPECT_TRUE(contains(r2.error().message, "application_id 0x4d2")) << r2.error().message;
  EXPECT_EQ(file_bytes(other), other_bytes);

  // A SQLite file with no tables but a foreign user_version is not an empty store either.
  const auto versioned = dir.path() / "versioned.db";
  raw_exec(versioned, "PRAGMA user_version = 3; CREATE TABLE t(x); DROP TABLE t;");
  const auto versioned_bytes = file_bytes(versioned);
  EXPECT_FALSE(Store::open(versioned));
  EXPECT_EQ(file_bytes(versioned), versioned_bytes);
}

TEST(StoreOpen, RefusesADatabaseFromANewerGpuemuWithoutTouchingIt) {
  TempDir dir;
  const auto file = dir.path() / "gpuemu.db";
  { ASSERT_TRUE(Store::open(file)); }
  raw_exec(file, "PRAGMA user_version = " + std::to_string(latest_schema_version() + 1));
  const auto before = file_bytes(file);
  auto store = Store::open(file);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().kind, ErrorKind::config);
  EXPECT_EQ(store.error().message,
            file.string() + " was written by a newer gpuemu (store schema version " +
                std::to_string(latest_schema_version() + 1) + "; this gpuemu knows up to " +
                std::to_string(latest_schema_version()) +
                "); upgrade gpuemu, or point GPUEMU_HOME at another directory to keep both");
  EXPECT_EQ(file_bytes(file), before);
}

TEST(StoreOpen, RefusesADirectoryInPlaceOfTheFile) {
  TempDir dir;
  const auto file = dir.path() / "gpuemu.db";
  std::filesystem::create_directory(file);
  auto store = Store::open(file);
  ASSERT_FALSE(store);
  EXPECT_TRUE(contains(store.error().message, "is not a regular file")) << store.error().message;
}

TEST(StoreOpen, DefaultPathFollowsGpuemuHomeThenHome) {
  const char* old_home = std::getenv("HOME");
  const char* old_gpuemu = std::getenv("GPUEMU_HOME");
  const std::string saved_home = old_home ? old_home : "";
  const std::string saved_gpuemu = old_gpuemu ? old_gpuemu : "";

  ::setenv("GPUEMU_HOME", "/srv/gpuemu", 1);
  EXPECT_EQ(*default_db_path(), std::filesystem::path("/srv/gpuemu/db/gpuemu.db"));
  ::unsetenv("GPUEMU_HOME");
  ::setenv("HOME", "/home/kim", 1);
  EXPECT_EQ(*default_db_path(), std::filesystem::path("/home/kim/.gpuemu/db/gpuemu.db"));
  ::unsetenv("HOME");
  auto missing = default_db_path();
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::environment);

  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
  if (old_gpuemu) ::setenv("GPUEMU_HOME", saved_gpuemu.c_str(), 1);
}

}  // namespace
}  // namespace gpuemu::store
