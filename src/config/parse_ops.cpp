// [[ops]]: one op per table, with its runnables resolved (docs/configuration.md, "Runnables"),
// dtypes and tolerances inheriting from [validation], and names checked for uniqueness.
#include <map>
#include <sstream>

#include "config/runnable.hpp"
#include "config/sections.hpp"
#include "config/value_parsers.hpp"

namespace gpuemu::config {

namespace {

SourceLocation location_of(const Diagnostics& diag, const toml::source_region& region) {
  return SourceLocation{diag.file_of(region), static_cast<int>(region.begin.line),
                        static_cast<int>(region.begin.column)};
}

// The op under test: op_script, else `module` as "pkg.mod:fn" or as a module holding a function
// named like the op. Empty when neither is set. `module` must be well-formed even when unused.
Expected<Runnable> op_under_test(const TableReader& r, const OpConfig& op) {
  const auto module = TRY(r.string_item("module"));
  if (module && !is_callable_spelling(module->value) && !is_dotted_module(module->value)) {
    return r.diag().at(
        *module->node,
        "'module' must be a dotted Python module or \"package.module:function\", got '" + module->value + "'",
        "to test a script, write op_script = \"" + module->value + "\"");
  }
  if (auto script = TRY(r.string_item("op_script"))) return resolve_runnable(r.diag(), *script, "op_script");
  if (!module) return Runnable{};
  Runnable callable;
  callable.kind = Runnable::Kind::callable;
  if (is_callable_spelling(module->value)) {
    const std::size_t colon = module->value.find(':');
    callable.module = module->value.substr(0, colon);
    callable.function = module->value.substr(colon + 1);
  } else {
    if (!is_identifier(op.name)) {
      return r.diag().at(*module->node,
                         "op name '" + op.name +
                             "' is not a Python identifier, so it cannot name the function in '" +
                             module->value + "'",
                         "write module = \"" + module->value + ":function_name\"");
    }
    callable.module = module->value;
    callable.function = op.name;
  }
  callable.spelling = callable.module + ":" + callable.function;
  return callable;
}

Expected<OpConfig> parse_op(const Diagnostics& diag, const toml::table& table,
                            const ValidationConfig& validation) {
  OpConfig op;
  op.name = TRY(TableReader(diag, table, "[[ops]]").required_string("name", "\"matmul\"")).value;
  const TableReader r(diag, table, "[[ops]] '" + op.name + "'");
  TRY(r.only_keys({"name", "module", "reference", "op_script", "input_names", "execution_mode", "dtypes",
                   "tolerances", "invariants", "persistent", "timeout", "source", "layouts", "kwargs",
                   "schema", "inputs"}));
  op.location = location_of(diag, table.source());
  if (auto m = TRY(r.string("module"))) op.module = *m;
  if (auto mode = TRY(parse_execution_mode_key(r, "execution_mode"))) op.execution_mode = *mode;
  if (auto p = TRY(r.boolean("persistent"))) op.persistent = *p;

  const auto reference = TRY(r.string_item("reference"));
  if (!reference) {
    return r.error(
        "op '" + op.name + "' has no 'reference'",
        "add reference = \"scripts/" + op.name + "_ref.py\" (a script) or \"package.module:function\"");
  }
  op.reference = TRY(resolve_runnable(diag, *reference, "reference"));
  op.op_script = TRY(op_under_test(r, op));
  if (op.op_script.empty() && op.execution_mode != ExecutionMode::client_side) {
    return r.error("op '" + op.name + "' has no op under test, which execution_mode '" +
                       std::string(execution_mode_name(op.execution_mode)) + "' runs",
                   "add op_script = \"kernels/" + op.name + ".py\" or module = \"package.module:function\"");
  }
  for (Runnable* runnable : {&op.reference, &op.op_script}) {
    runnable->persistent = op.persistent && runnable->kind == Runnable::Kind::script;
  }

  op.dtypes = TRY(parse_dtype_list(r, "dtypes")).value_or(validation.dtypes);
  op.tolerances = TRY(parse_tolerances(r, "tolerances", "[ops.tolerances]", [&](tensor::DType dtype) {
    const auto it = validation.tolerances.find(dtype);
    return it != validation.tolerances.end() ? it->second : check::default_tolerance(dtype);
  }));
  op.invariants = TRY(parse_invariant_list(r, "invariants")).value_or(std::vector<check::Invariant>{});
  if (auto layouts = TRY(parse_layout_list(r, "layouts"))) op.layouts = *layouts;
  op.timeout_secs = TRY(r.positive_number("timeout"));
  if (auto s = TRY(r.string("source"))) op.source = *s;
  if (const toml::table* kwargs = TRY(r.subtable("kwargs"))) op.kwargs = toml_to_json(*kwargs);
  TRY(parse_op_inputs(r, op));
  return op;
}

}  // namespace

Expected<std::vector<const toml::table*>> array_of_tables(const Diagnostics& diag, const toml::table& root,
                                                          std::string_view name) {
  std::vector<const toml::table*> out;
  const toml::node* n = root.get(name);
  if (n == nullptr) return out;
  const auto* arr = n->as_array();
  const std::string expected = "an array of tables ([[" + std::string(name) + "]])";
  if (arr == nullptr) return TableReader(diag, root, "the top level").type_error(name, *n, expected);
  for (const toml::node& element : *arr) {
    const auto* t = element.as_table();
    if (t == nullptr) return TableReader(diag, root, "the top level").type_error(name, element, expected);
    out.push_back(t);
  }
  return out;
}

Expected<std::vector<OpConfig>> parse_ops(const Diagnostics& diag, const toml::table& root,
                                          const ValidationConfig& validation) {
  std::vector<OpConfig> ops;
  std::map<std::string, const toml::table*> seen;
  for (const toml::table* table : TRY(array_of_tables(diag, root, "ops"))) {
    OpConfig op = TRY(parse_op(diag, *table, validation));
    if (const auto it = seen.find(op.name); it != seen.end()) {
      return diag.at(*table->get("name"), "duplicate op name '" + op.name + "'",
                     "op names must be unique; the first is at " + diag.position(it->second->source()));
    }
    seen[op.name] = table;
    ops.push_back(std::move(op));
  }
  return ops;
}

nlohmann::json toml_to_json(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, value] : *node.as_table()) out[std::string(key.str())] = toml_to_json(value);
      return out;
    }
    case toml::node_type::array: {
      nlohmann::json out = nlohmann::json::array();
      for (const toml::node& value : *node.as_array()) out.push_back(toml_to_json(value));
      return out;
    }
    case toml::node_type::string:
      return node.as_string()->get();
    case toml::node_type::integer:
      return node.as_integer()->get();
    case toml::node_type::floating_point:
      return node.as_floating_point()->get();
    case toml::node_type::boolean:
      return node.as_boolean()->get();
    default: {
      // Dates and times travel as their TOML spelling; scripts parse them if they care.
      std::ostringstream text;
      node.visit([&](const auto& v) { text << v; });
      return text.str();
    }
  }
}

}  // namespace gpuemu::config
