// The store's schema: how a gpuemu database is recognised (application_id), its version
// (user_version) and the ordered migrations that bring an older or empty file up to date.
#pragma once

#include <cstdint>
#include <filesystem>

#include "store/sqlite.hpp"
#include "util/error.hpp"

namespace gpuemu::store {

// PRAGMA application_id of every gpuemu database: "gpue" in ASCII. Never change it.
inline constexpr std::int32_t kApplicationId = 0x67707565;

// PRAGMA user_version after all migrations this build knows. Append migrations; never edit or
// reorder a released one (docs/store.md, "Migrations").
std::int64_t latest_schema_version();

// Refuses, before SQLite touches the file, anything that is not a SQLite database at all
// (random bytes, a truncated header). An absent or empty file is fine: it becomes a new store.
Expected<void> check_file_header(const std::filesystem::path& file);

// Reads the identity of an open database without writing to it and refuses a foreign database
// (another application's tables or id), a corrupt one, or one from a newer gpuemu.
Expected<void> check_identity(const sqlite::Connection& connection);

// Applies the missing migrations in one BEGIN IMMEDIATE transaction, re-checking the version
// inside it so two processes opening a new file at once migrate it exactly once.
Expected<void> migrate(const sqlite::Connection& connection);

}  // namespace gpuemu::store
