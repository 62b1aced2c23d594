// TableReader: turns TOML values of the common types into C++ values, so every section
// parser reports unknown keys and wrong types with the same wording.
#include "config/table_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "config/key_table.hpp"
#include "util/suggest.hpp"

namespace gpuemu::config {

std::string_view toml_type_phrase(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string number_text(double value) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, result.ptr);
}

std::vector<const toml::key*> keys_in_file_order(const toml::table& table) {
  std::vector<const toml::key*> keys;
  for (const auto& [key, value] : table) keys.push_back(&key);
  std::stable_sort(keys.begin(), keys.end(), [](const toml::key* a, const toml::key* b) {
    const auto& pa = a->source().begin;
    const auto& pb = b->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return keys;
}

namespace {

// The innermost live KeyReadLog of this thread; nullptr (the usual case) when none.
thread_local KeyReadLog* active_log = nullptr;

}  // namespace

KeyReadLog::KeyReadLog() : outer_(active_log) {
  active_log = this;
}

KeyReadLog::~KeyReadLog() {
  active_log = outer_;
}

void KeyReadLog::note(std::string_view section, std::string_view key, bool present) {
  Read& read = reads_[{std::string(section), std::string(key)}];
  read.present = read.present || present;
}

const toml::node* TableReader::node(std::string_view key) const {
  const toml::node* found = table_->get(key);
  if (active_log != nullptr && section_ != kUserNamedKeys) active_log->note(section_, key, found != nullptr);
  return found;
}

Expected<void> TableReader::only_keys() const {
  const std::vector<std::string_view> names = keys_of(section_);
  for (const toml::key* key : keys_in_file_order(*table_)) {
    if (std::find(names.begin(), names.end(), key->str()) != names.end()) continue;
    std::string hint = util::did_you_mean(key->str(), names);
    if (hint.empty()) hint = "allowed keys are " + util::quoted_list(names);
    return diag_->at(*key, "unknown key '" + std::string(key->str()) + "' in " + context_, hint);
  }
  return {};
}

std::unexpected<Error> TableReader::type_error(std::string_view key, const toml::node& node,
                                               std::string_view expected) const {
  return diag_->at(node, "wrong type for '" + std::string(key) + "': expected " + std::string(expected) +
                             ", got " + std::string(toml_type_phrase(node)));
}

Expected<std::optional<StringItem>> TableReader::string_item(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  const auto* s = n->as_string();
  if (s == nullptr) return type_error(key, *n, "a string");
  return StringItem{s->get(), n};
}

Expected<std::optional<std::string>> TableReader::string(std::string_view key) const {
  const auto item = TRY(string_item(key));
  if (!item) return std::nullopt;
  return item->value;
}

Expected<std::optional<bool>> TableReader::boolean(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  const auto* b = n->as_boolean();
  if (b == nullptr) return type_error(key, *n, "a boolean (true or false)");
  return b->get();
}

Expected<std::optional<std::int64_t>> TableReader::integer(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  const auto* i = n->as_integer();
  if (i == nullptr) return type_error(key, *n, "an integer");
  return i->get();
}

Expected<std::optional<double>> TableReader::number(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  if (const auto* i = n->as_integer()) return static_cast<double>(i->get());
  const auto* f = n->as_floating_point();
  if (f == nullptr) return type_error(key, *n, "a number");
  if (!std::isfinite(f->get())) {
    return diag_->at(*n, "'" + std::string(key) + "' must be a finite number");
  }
  return f->get();
}

Expected<std::optional<std::vector<StringItem>>> TableReader::strings(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  const auto* arr = n->as_array();
  if (arr == nullptr) return type_error(key, *n, "an array of strings");
  std::vector<StringItem> out;
  for (const toml::node& element : *arr) {
    const auto* s = element.as_string();
    if (s == nullptr) return type_error(key, element, "an array of strings");
    out.push_back(StringItem{s->get(), &element});
  }
  return out;
}

Expected<const toml::table*> TableReader::subtable(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return nullptr;
  const auto* t = n->as_table();
  if (t == nullptr) return type_error(key, *n, "a table");
  return t;
}

Expected<const toml::array*> TableReader::array(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr) return nullptr;
  const auto* a = n->as_array();
  if (a == nullptr) return type_error(key, *n, "an array");
  return a;
}

Expected<std::optional<int>> TableReader::int_at_least(std::string_view key, std::int64_t minimum) const {
  return int_in_range(key, minimum, std::numeric_limits<int>::max());
}

Expected<std::optional<int>> TableReader::int_in_range(std::string_view key, std::int64_t minimum,
                                                       std::int64_t maximum) const {
  const auto value = TRY(integer(key));
  if (!value) return std::nullopt;
  if (*value < minimum) {
    return diag_->at(*node(key), "'" + std::string(key) + "' must be at least " + std::to_string(minimum) +
                                     ", got " + std::to_string(*value));
  }
  if (*value > maximum) {
    return diag_->at(*node(key), "'" + std::string(key) + "' is too large: " + std::to_string(*value),
                     "use at most " + std::to_string(maximum));
  }
  return static_cast<int>(*value);
}

Expected<std::optional<double>> TableReader::timeout_seconds(std::string_view key) const {
  const auto value = TRY(number(key));
  // Written as !(v > 0) so that nan, which compares false, is refused too.
  if (value && !(*value > 0)) {
    return diag_->at(*node(key), "'" + std::string(key) + "' must be greater than 0");
  }
  if (value && !(*value <= kMaxTimeoutSecs)) {
    return diag_->at(*node(key), fmt::format("'{}' is too large: {} seconds", key, *value),
                     fmt::format("use at most {} (one day)", kMaxTimeoutSecs));
  }
  return value;
}

Expected<StringItem> TableReader::required_string(std::string_view key, std::string_view example) const {
  const auto item = TRY(string_item(key));
  if (!item) {
    return error(context_ + " has no '" + std::string(key) + "'",
                 "add " + std::string(key) + " = " + std::string(example));
  }
  if (item->value.empty()) {
    return diag_->at(*item->node, "'" + std::string(key) + "' must not be empty",
                     "write " + std::string(key) + " = " + std::string(example));
  }
  return *item;
}

}  // namespace gpuemu::config
