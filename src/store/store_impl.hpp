// Internals shared by the store's .cpp files: the connection behind a Store, and how a
// CaseRecord's fields become columns and come back (JSON columns, u64 seeds as decimal text).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace gpuemu::store {

struct Store::Impl {
  sqlite::Connection db;
  Clock clock;
  mutable std::mutex mutex;  // one connection, one statement sequence at a time

  Millis now() const { return clock(); }
};

namespace detail {

// u64 as decimal text: exact for all 64 bits, readable in the sqlite3 shell.
std::string seed_text(std::uint64_t seed);
Expected<std::uint64_t> parse_seed(const std::string& text, const std::string& what);

// JSON columns. Non-finite doubles are written as "NaN", "Infinity", "-Infinity" (like
// result.json) since JSON has no such numbers; the parsers accept both forms.
std::string dims_json(const std::map<std::string, std::int64_t>& dims);
std::string shapes_json(const std::map<std::string, tensor::Shape>& shapes);
std::string worst_json(const std::vector<check::ElementDiff>& worst);
Expected<std::map<std::string, std::int64_t>> parse_dims(const std::string& text, const std::string& what);
Expected<std::map<std::string, tensor::Shape>> parse_shapes(const std::string& text, const std::string& what);
Expected<std::vector<check::ElementDiff>> parse_worst(const std::string& text, const std::string& what);

// Inserts one failure row (and its snapshot row) inside the caller's transaction.
Expected<FailureId> insert_failure(const Store::Impl& impl, std::optional<RunId> run,
                                   const std::string& config_digest, const result::CaseRecord& record,
                                   std::optional<FailureId> minimized_from);

}  // namespace detail
}  // namespace gpuemu::store
