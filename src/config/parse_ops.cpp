// One [[ops]] table, read on top of the op it extends (if any): its runnables resolved
// (docs/configuration.md, "Runnables"), its implementations listed, dtypes and tolerances inherited.
#include <cctype>
#include <map>
#include <sstream>

#include "config/key_table.hpp"
#include "config/runnable.hpp"
#include "config/sections.hpp"
#include "config/value_parsers.hpp"

namespace gpuemu::config {

namespace {

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
  callable.location = r.diag().locate(module->node->source());
  return callable;
}

// Keys that say which kernel runs: a child op that names one of them replaces all of them.
bool names_kernel(const TableReader& r) {
  return r.node("op_script") || r.node("module") || r.node("implementations");
}

Expected<ImplementationEntry> parse_implementation(const TableReader& r, const toml::node& element) {
  const Diagnostics& diag = r.diag();
  ImplementationEntry entry;
  const StringItem* runnable_item = nullptr;
  StringItem item;
  if (const auto* text = element.as_string()) {
    item = StringItem{text->get(), &element};
    runnable_item = &item;
  } else if (const auto* table = element.as_table()) {
    const TableReader t(diag, *table, "ops.implementations", r.context() + " implementation");
    TRY(t.only_keys());
    item = TRY(t.required_string("op_script", "\"kernels.softmax:v2\" or \"kernels/softmax_v2.py\""));
    runnable_item = &item;
    if (auto name = TRY(t.string_item("name"))) {
      entry.name = name->value;
      entry.name_node = name->node;
    }
    if (auto source = TRY(t.string("source"))) entry.source = *source;
  } else {
    return r.type_error(
        "implementations", element,
        "an array of \"module:function\" or script strings, or of tables { name, op_script }");
  }
  entry.runnable = TRY(resolve_runnable(diag, *runnable_item, "implementations"));
  entry.node = &element;
  if (entry.name.empty()) {
    entry.name = entry.runnable.kind == Runnable::Kind::callable ? entry.runnable.function
                                                                 : entry.runnable.script.stem().string();
    entry.name_node = &element;
  }
  if (!is_implementation_name(entry.name)) {
    return diag.at(*entry.name_node, "implementation name '" + entry.name + "' is not allowed",
                   "use letters, digits, '_', '-' and '.'; write { name = \"v2\", op_script = \"" +
                       item.value + "\" } to choose one");
  }
  return entry;
}

Expected<std::vector<ImplementationEntry>> parse_implementations(const TableReader& r) {
  const toml::array* list = TRY(r.array("implementations"));
  if (list == nullptr) return std::vector<ImplementationEntry>{};
  const Diagnostics& diag = r.diag();
  if (list->empty()) {
    return diag.at(*r.node("implementations"), "'implementations' must not be empty",
                   "list at least one, e.g. implementations = [\"kernels.softmax:v1\"]");
  }
  for (const char* other : {"op_script", "module"}) {
    if (r.node(other) != nullptr) {
      return diag.at(
          *r.node("implementations"), "op has both 'implementations' and '" + std::string(other) + "'",
          "list the " + std::string(other) + " as one of the implementations and remove '" + other + "'");
    }
  }
  std::vector<ImplementationEntry> out;
  for (const toml::node& element : *list) {
    ImplementationEntry entry = TRY(parse_implementation(r, element));
    for (const ImplementationEntry& seen : out) {
      if (seen.name != entry.name) continue;
      return diag.at(*entry.name_node,
                     "implementation name '" + entry.name + "' is used twice (first at " +
                         diag.position(seen.name_node->source()) + ")",
                     "name one of them: { name = \"" + entry.name + "_2\", op_script = \"" +
                         entry.runnable.spelling + "\" }");
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

bool is_implementation_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.')) return false;
  }
  return true;
}

Expected<OpSpec> parse_op(const Diagnostics& diag, const toml::table& table,
                          const ValidationConfig& validation, const OpSpec* base) {
  OpSpec spec = base != nullptr ? *base : OpSpec{};
  OpConfig& op = spec.op;
  op.name = TRY(TableReader(diag, table, "ops", "[[ops]]").required_string("name", "\"matmul\"")).value;
  const TableReader r(diag, table, "ops", "[[ops]] '" + op.name + "'");
  TRY(r.only_keys());
  if (base == nullptr) {
    op.triton_interpret = validation.triton_interpret;
    op.pallas_interpret = validation.pallas_interpret;
    op.sanitize = validation.sanitize;
  }
  if (auto f = TRY(parse_framework_key(r, "framework"))) {
    op.framework = *f;
    op.framework_written = true;
  }
  if (auto f = TRY(parse_framework_key(r, "reference_framework"))) op.reference_framework = *f;
  if (auto m = TRY(parse_interpret_key(r, "triton_interpret"))) op.triton_interpret = *m;
  if (auto m = TRY(parse_interpret_key(r, "pallas_interpret"))) op.pallas_interpret = *m;
  if (auto b = TRY(r.boolean("interpreter_cuda_shim"))) op.interpreter_cuda_shim = *b;
  if (auto b = TRY(r.boolean("sanitize"))) op.sanitize = *b;
  if (auto b = TRY(r.boolean("require_launch"))) op.require_launch = *b;
  if (op.name.find('/') != std::string::npos) {
    return diag.at(*table.get("name"), "op name '" + op.name + "' contains '/'",
                   "'/' separates an op from its implementation in results (softmax/v2); rename the op");
  }
  if (op.name.find_first_of("[]") != std::string::npos) {
    return diag.at(
        *table.get("name"), "op name '" + op.name + "' contains '[' or ']'",
        "'[...]' names an autotune config of an op in results (softmax[BLOCK=64,num_warps=4]); rename "
        "the op");
  }
  op.spec = op.name;
  op.extends = base != nullptr ? base->op.name : "";
  op.location = diag.locate(table.source());
  if (auto mode = TRY(parse_execution_mode_key(r, "execution_mode"))) op.execution_mode = *mode;
  if (auto p = TRY(r.boolean("persistent"))) op.persistent = *p;

  if (const auto reference = TRY(r.string_item("reference"))) {
    op.reference = TRY(resolve_runnable(diag, *reference, "reference"));
  } else if (base == nullptr) {
    return r.error(
        "op '" + op.name + "' has no 'reference'",
        "add reference = \"scripts/" + op.name + "_ref.py\" (a script) or \"package.module:function\"");
  }
  if (base == nullptr || names_kernel(r)) {
    op.module.clear();
    op.source.clear();
    if (auto m = TRY(r.string("module"))) op.module = *m;
    op.op_script = TRY(op_under_test(r, op));
    spec.implementations = TRY(parse_implementations(r));
  }
  if (auto s = TRY(r.string_item("source"))) {
    if (!spec.implementations.empty()) {
      return diag.at(
          *s->node, "'source' names one kernel, but op '" + op.name + "' has several implementations",
          "give each implementation its own source: { name = \"v1\", op_script = \"...\", source = "
          "\"file.py:12\" }, or leave it out: the source of a callable is inferred");
    }
    op.source = s->value;
  }

  if (auto dtypes = TRY(parse_dtype_list(r, "dtypes"))) {
    op.dtypes = *dtypes;
  } else if (base == nullptr) {
    op.dtypes = validation.dtypes;
  }
  const auto inherited_tolerances = op.tolerances;
  const auto overrides = TRY(parse_tolerances(r, "tolerances", "[ops.tolerances]", [&](tensor::DType dtype) {
    if (const auto it = inherited_tolerances.find(dtype); it != inherited_tolerances.end()) return it->second;
    const auto it = validation.tolerances.find(dtype);
    return it != validation.tolerances.end() ? it->second : check::default_tolerance(dtype);
  }));
  for (const auto& [dtype, tol] : overrides) op.tolerances[dtype] = tol;
  if (auto invariants = TRY(parse_invariant_list(r, "invariants"))) op.invariants = *invariants;
  if (auto layouts = TRY(parse_layout_list(r, "layouts"))) op.layouts = *layouts;
  if (auto timeout = TRY(r.timeout_seconds("timeout"))) op.timeout_secs = timeout;
  if (const toml::table* kwargs = TRY(r.subtable("kwargs"))) {
    const nlohmann::json written = toml_to_json(*kwargs);
    for (const auto& [key, value] : written.items()) op.kwargs[key] = value;
  }
  if (base == nullptr || r.node("schema") || r.node("inputs") || r.node("input_names")) {
    TRY(parse_op_inputs(r, op));
  }
  return spec;
}

Expected<std::vector<const toml::table*>> array_of_tables(const Diagnostics& diag, const toml::table& root,
                                                          std::string_view name) {
  std::vector<const toml::table*> out;
  const TableReader top(diag, root, "", "the top level");
  const toml::node* n = top.node(name);
  if (n == nullptr) return out;
  const auto* arr = n->as_array();
  const std::string expected = "an array of tables ([[" + std::string(name) + "]])";
  if (arr == nullptr) return top.type_error(name, *n, expected);
  for (const toml::node& element : *arr) {
    const auto* t = element.as_table();
    if (t == nullptr) return top.type_error(name, element, expected);
    out.push_back(t);
  }
  return out;
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
