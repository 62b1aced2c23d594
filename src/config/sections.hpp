// The section parsers behind load_config: each reads one part of the merged TOML document into
// the Config model, checking keys, types and values with diagnostics that point into the file.
#pragma once

#include <vector>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "config/diagnostic.hpp"
#include "config/table_reader.hpp"

namespace gpuemu::config {

Expected<ProjectConfig> parse_project(const Diagnostics& diag, const toml::table& root);
Expected<ValidationConfig> parse_validation(const Diagnostics& diag, const toml::table& root);
// [policies] and [ci] overwrite the keys the file sets in `base` (the defaults, or the project's
// values when a policy pack is applied on top of them).
Expected<PolicyConfig> parse_policies(const Diagnostics& diag, const toml::table& root,
                                      PolicyConfig base = {});
Expected<CiConfig> parse_ci(const Diagnostics& diag, const toml::table& root, CiConfig base = {});
Expected<std::vector<KernelConfig>> parse_kernels(const Diagnostics& diag, const toml::table& root);

// [[ops]]; needs [validation] for default dtypes and tolerance fallbacks. Resolves `extends`
// and expands `implementations` into one OpConfig each (config/op_family.cpp).
Expected<std::vector<OpConfig>> parse_ops(const Diagnostics& diag, const toml::table& root,
                                          const ValidationConfig& validation);

// One entry of an op's `implementations`: its name in results, what runs, its written source.
struct ImplementationEntry {
  std::string name;
  Runnable runnable;
  std::string source;
  const toml::node* node = nullptr;       // the entry, for diagnostics
  const toml::node* name_node = nullptr;  // its `name`, or the entry when the name is derived
};

// An [[ops]] table as read, before its implementations are expanded: what a child inherits.
struct OpSpec {
  OpConfig op;
  std::vector<ImplementationEntry> implementations;
};

// Reads one [[ops]] table on top of `base` (the op it extends, or nullptr): keys the table names
// override the base's; tables (tolerances, kwargs) merge key by key; naming any of op_script,
// module or implementations replaces all three and the base's source.
Expected<OpSpec> parse_op(const Diagnostics& diag, const toml::table& table, const ValidationConfig& validation,
                          const OpSpec* base);

// Letters, digits, '_', '-' and '.': what an implementation's name may hold ('/' separates it).
bool is_implementation_name(std::string_view name);

// [ops.schema] and [ops.inputs] of one op: fills schema, input_names and inputs.
Expected<void> parse_op_inputs(const TableReader& op_table, OpConfig& op);

// [ops.kwargs] or any other TOML value as JSON, for passing through to scripts.
nlohmann::json toml_to_json(const toml::node& node);

// Every [[name]] entry of the root as a table, with an error for a non-table entry.
Expected<std::vector<const toml::table*>> array_of_tables(const Diagnostics& diag, const toml::table& root,
                                                          std::string_view name);

}  // namespace gpuemu::config
