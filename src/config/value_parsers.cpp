// Named-value parsing shared by the section parsers. Name lists come from the owning modules
// (tensor, check) so a new dtype or invariant is accepted here without edits.
#include "config/value_parsers.hpp"

#include <algorithm>
#include <set>

#include "config/key_table.hpp"
#include "util/suggest.hpp"

namespace gpuemu::config {

namespace {

std::vector<std::string_view> layout_names() {
  std::vector<std::string_view> names;
  for (auto l : {tensor::Layout::contiguous, tensor::Layout::transposed, tensor::Layout::strided,
                 tensor::Layout::channels_last}) {
    names.push_back(tensor::layout_name(l));
  }
  return names;
}

std::vector<std::string_view> execution_mode_names() {
  std::vector<std::string_view> names;
  for (auto m :
       {ExecutionMode::script_based, ExecutionMode::client_side, ExecutionMode::daemon_orchestrated}) {
    names.push_back(execution_mode_name(m));
  }
  return names;
}

// "did you mean" when something is close, else the full list of names.
std::string name_hint(std::string_view word, const std::vector<std::string_view>& names,
                      std::string_view what) {
  std::string hint = util::did_you_mean(word, names);
  return hint.empty() ? std::string(what) + " are " + util::quoted_list(names) : hint;
}

// Parses each string of an array with `parse`, rejecting duplicates.
template <class T, class Parse>
Expected<std::optional<std::vector<T>>> parse_named_list(const TableReader& reader, std::string_view key,
                                                         Parse parse, bool allow_empty) {
  const auto items = TRY(reader.strings(key));
  if (!items) return std::nullopt;
  if (items->empty() && !allow_empty) {
    return reader.diag().at(*reader.node(key), "'" + std::string(key) + "' must not be empty");
  }
  std::vector<T> out;
  for (const StringItem& item : *items) {
    const T value = TRY(parse(item));
    if (std::find(out.begin(), out.end(), value) != out.end()) {
      return reader.diag().at(*item.node,
                              "'" + item.value + "' is listed twice in '" + std::string(key) + "'");
    }
    out.push_back(value);
  }
  return out;
}

}  // namespace

Expected<tensor::DType> parse_dtype_item(const Diagnostics& diag, const StringItem& item) {
  if (const auto dtype = tensor::parse_dtype(item.value)) return *dtype;
  return diag.at(*item.node, "unknown dtype '" + item.value + "'",
                 name_hint(item.value, tensor::all_dtype_names(), "dtypes"));
}

Expected<std::optional<std::vector<tensor::DType>>> parse_dtype_list(const TableReader& reader,
                                                                     std::string_view key) {
  return parse_named_list<tensor::DType>(
      reader, key, [&](const StringItem& item) { return parse_dtype_item(reader.diag(), item); }, false);
}

Expected<std::map<tensor::DType, check::ToleranceSpec>> parse_tolerances(
    const TableReader& parent, std::string_view key, const std::string& context,
    const std::function<check::ToleranceSpec(tensor::DType)>& fallback) {
  std::map<tensor::DType, check::ToleranceSpec> out;
  const toml::table* table = TRY(parent.subtable(key));
  if (table == nullptr) return out;
  const Diagnostics& diag = parent.diag();
  for (const toml::key* k : keys_in_file_order(*table)) {
    const StringItem name{std::string(k->str()), nullptr};
    const auto dtype = tensor::parse_dtype(name.value);
    if (!dtype) {
      return diag.at(*k, "unknown dtype '" + name.value + "' in " + context,
                     name_hint(name.value, tensor::all_dtype_names(), "dtypes"));
    }
    if (out.contains(*dtype)) {
      return diag.at(
          *k, "tolerance for " + std::string(tensor::dtype_name(*dtype)) + " is given twice in " + context);
    }
    const toml::node& value = *table->get(k->str());
    const auto* spec_table = value.as_table();
    if (spec_table == nullptr) {
      return diag.at(value, "wrong type for '" + name.value +
                                "': expected a table { atol = ..., rtol = ... }, got " +
                                std::string(toml_type_phrase(value)));
    }
    const TableReader spec(diag, *spec_table, "validation.tolerances.DTYPE", context + " " + name.value);
    TRY(spec.only_keys());
    check::ToleranceSpec tol = fallback(*dtype);
    for (const auto& [field, target] : {std::pair{"atol", &tol.atol}, std::pair{"rtol", &tol.rtol}}) {
      const auto v = TRY(spec.number(field));
      if (!v) continue;
      if (*v < 0) return diag.at(*spec.node(field), "'" + std::string(field) + "' must not be negative");
      *target = *v;
    }
    out[*dtype] = tol;
  }
  return out;
}

Expected<std::optional<std::vector<check::Invariant>>> parse_invariant_list(const TableReader& reader,
                                                                            std::string_view key) {
  return parse_named_list<check::Invariant>(
      reader, key,
      [&](const StringItem& item) -> Expected<check::Invariant> {
        if (const auto inv = check::parse_invariant(item.value)) return *inv;
        return reader.diag().at(*item.node, "unknown invariant '" + item.value + "'",
                                name_hint(item.value, check::all_invariant_names(), "invariants"));
      },
      true);
}

Expected<std::optional<std::vector<tensor::Layout>>> parse_layout_list(const TableReader& reader,
                                                                       std::string_view key) {
  return parse_named_list<tensor::Layout>(
      reader, key,
      [&](const StringItem& item) -> Expected<tensor::Layout> {
        if (const auto layout = tensor::parse_layout(item.value)) return *layout;
        return reader.diag().at(*item.node, "unknown layout '" + item.value + "'",
                                name_hint(item.value, layout_names(), "layouts"));
      },
      false);
}

Expected<std::optional<ExecutionMode>> parse_execution_mode_key(const TableReader& reader,
                                                                std::string_view key) {
  const auto item = TRY(reader.string_item(key));
  if (!item) return std::nullopt;
  if (const auto mode = parse_execution_mode(item->value)) return *mode;
  return reader.diag().at(*item->node, "unknown execution mode '" + item->value + "'",
                          name_hint(item->value, execution_mode_names(), "execution modes"));
}

Expected<std::optional<std::string>> parse_choice(const TableReader& reader, std::string_view key,
                                                  const std::vector<std::string_view>& allowed,
                                                  std::string_view plural) {
  const auto item = TRY(reader.string_item(key));
  if (!item) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), item->value) != allowed.end()) return item->value;
  return reader.diag().at(*item->node, "unknown " + std::string(key) + " '" + item->value + "'",
                          name_hint(item->value, allowed, plural));
}

Expected<std::optional<Framework>> parse_framework_key(const TableReader& reader, std::string_view key) {
  const auto name = TRY(parse_choice(reader, key, {"numpy", "pytorch", "jax", "tensorflow"}, "frameworks"));
  if (!name) return std::nullopt;
  return parse_framework(*name);
}

Expected<std::optional<InterpretMode>> parse_interpret_key(const TableReader& reader, std::string_view key) {
  const auto name = TRY(parse_choice(reader, key, {"auto", "always", "never"}, "interpreter modes"));
  if (!name) return std::nullopt;
  return parse_interpret_mode(*name);
}

}  // namespace gpuemu::config
