// Typed, checked access to one TOML table of gpuemu.toml: unknown keys and wrong types become
// diagnostics that point at the offending key or value and name the expected type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "config/diagnostic.hpp"
#include "util/error.hpp"

namespace gpuemu::config {

// The longest per-case timeout a config may set: one day (docs/configuration.md).
inline constexpr double kMaxTimeoutSecs = 86400;
// The most cases per op (and dtype) a config may ask for: the daemon's limit for a fuzz request.
// Above it a plan's seeds alone would take gigabytes.
inline constexpr std::int64_t kMaxCasesPerOp = 1'000'000;

// "a string", "an integer", "a table", ... for "got ..." in type errors.
std::string_view toml_type_phrase(const toml::node& node);

// Shortest text that reads back as the same double ("0.5", "1e-05"), for messages.
std::string number_text(double value);

// A string value together with the node it came from, so later checks can point at it.
struct StringItem {
  std::string value;
  const toml::node* node = nullptr;
};

// The section of a reader whose keys the user names (dims, tiles, artifact_thresholds): the key
// table has no rows for them, so only_keys allows nothing and KeyReadLog notes nothing.
inline constexpr std::string_view kUserNamedKeys = "*";

// One table being read. `section` is its section in the key table (config/key_table.hpp:
// "validation", "ops.inputs.NAME", "" for the top level), whose rows are the keys it may hold;
// `context` names it in messages, e.g. "[validation]" or "[[ops]] 'softmax'".
class TableReader {
 public:
  TableReader(const Diagnostics& diag, const toml::table& table, std::string_view section,
              std::string context)
      : diag_(&diag), table_(&table), section_(section), context_(std::move(context)) {}

  const Diagnostics& diag() const { return *diag_; }
  const toml::table& table() const { return *table_; }
  std::string_view section() const { return section_; }
  const std::string& context() const { return context_; }

  // Every key must be a row of the reader's section (config::keys_of); otherwise an error at the
  // key with a suggestion.
  Expected<void> only_keys() const;

  // Every read of a key goes through here, so that a KeyReadLog sees it.
  const toml::node* node(std::string_view key) const;
  // An error at the table itself, e.g. for a missing required key.
  std::unexpected<Error> error(std::string_view message, std::string_view hint = {}) const {
    return diag_->at(table_->source(), message, hint);
  }

  // Absent keys give std::nullopt; present keys of another type are errors.
  Expected<std::optional<std::string>> string(std::string_view key) const;
  Expected<std::optional<StringItem>> string_item(std::string_view key) const;
  Expected<std::optional<bool>> boolean(std::string_view key) const;
  Expected<std::optional<std::int64_t>> integer(std::string_view key) const;
  // Integers are accepted where a float is expected.
  Expected<std::optional<double>> number(std::string_view key) const;
  Expected<std::optional<std::vector<StringItem>>> strings(std::string_view key) const;
  Expected<const toml::table*> subtable(std::string_view key) const;  // nullptr when absent
  Expected<const toml::array*> array(std::string_view key) const;     // nullptr when absent

  // Integers with a lower bound, e.g. parallel_jobs >= 1; fits into int.
  Expected<std::optional<int>> int_at_least(std::string_view key, std::int64_t minimum) const;
  // Integers in [minimum, maximum] (maximum <= INT_MAX).
  Expected<std::optional<int>> int_in_range(std::string_view key, std::int64_t minimum,
                                            std::int64_t maximum) const;
  // A timeout in seconds: a finite number > 0 and at most kMaxTimeoutSecs, so that converting it to
  // a clock duration can never overflow.
  Expected<std::optional<double>> timeout_seconds(std::string_view key) const;
  // A required non-empty string.
  Expected<StringItem> required_string(std::string_view key, std::string_view example) const;

  // "wrong type for 'KEY': expected EXPECTED, got ACTUAL" at `node`.
  std::unexpected<Error> type_error(std::string_view key, const toml::node& node,
                                    std::string_view expected) const;

 private:
  const Diagnostics* diag_;
  const toml::table* table_;
  std::string_view section_;
  std::string context_;
};

// While one lives, every key the TableReaders of its thread are asked for, as (section, key), and
// whether the table held it. key_table_test loads a config that sets every key under one, so that
// a row of the key table no parser reads (a key gpuemu.toml would accept and ignore) fails a test.
class KeyReadLog {
 public:
  struct Read {
    bool present = false;  // the key was in the table at least once when it was asked for
  };
  KeyReadLog();
  ~KeyReadLog();
  KeyReadLog(const KeyReadLog&) = delete;
  KeyReadLog& operator=(const KeyReadLog&) = delete;

  const std::map<std::pair<std::string, std::string>, Read>& reads() const { return reads_; }
  void note(std::string_view section, std::string_view key, bool present);

 private:
  std::map<std::pair<std::string, std::string>, Read> reads_;
  KeyReadLog* outer_;
};

// The keys of a table in the order they appear in the file (toml++ keeps them sorted by name).
std::vector<const toml::key*> keys_in_file_order(const toml::table& table);

}  // namespace gpuemu::config
