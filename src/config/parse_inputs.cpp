// [ops.schema] and [ops.inputs.NAME] of one op: symbolic dims shared between inputs, literal
// shapes for ops without a schema, value domains, fixed dtypes, and the order of input names.
#include <algorithm>
#include <cmath>

#include "config/key_table.hpp"
#include "config/sections.hpp"
#include "config/value_parsers.hpp"
#include "util/suggest.hpp"

namespace gpuemu::config {

namespace {

// A keyed entry with the key it came from, in file order.
struct Entry {
  std::string name;
  const toml::key* key;
  const toml::node* value;
};

std::vector<Entry> entries_in_file_order(const toml::table& table) {
  std::vector<Entry> out;
  for (const toml::key* k : keys_in_file_order(table)) {
    out.push_back(Entry{std::string(k->str()), k, table.get(k->str())});
  }
  return out;
}

Expected<std::int64_t> positive_integer(const Diagnostics& diag, const toml::node& node,
                                        std::string_view what) {
  const std::int64_t value = node.as_integer()->get();
  if (value < 1) {
    return diag.at(node, std::string(what) + " must be a positive integer, got " + std::to_string(value));
  }
  return value;
}

Expected<DimSpec> parse_dim(const Diagnostics& diag, const Entry& e) {
  DimSpec dim;
  dim.name = e.name;
  const std::string example =
      "write " + e.name + " = [1, 256] or " + e.name + " = { candidates = [1, 3, 127] }";
  if (const auto* range = e.value->as_array()) {
    const bool two_ints = range->size() == 2 && (*range)[0].is_integer() && (*range)[1].is_integer();
    if (!two_ints)
      return diag.at(*e.value, "dim '" + e.name + "' must be a range [min, max] of two integers", example);
    dim.min = (*range)[0].as_integer()->get();
    dim.max = (*range)[1].as_integer()->get();
    // 0 is a size like any other (an empty tensor); the fuzzer draws it as a boundary when in range.
    if (dim.min < 0 || dim.min > dim.max) {
      return diag.at(*e.value,
                     "bad range [" + std::to_string(dim.min) + ", " + std::to_string(dim.max) +
                         "] for dim '" + e.name + "': need 0 <= min <= max",
                     "write " + e.name + " = [" + std::to_string(std::max<std::int64_t>(0, dim.min)) + ", " +
                         std::to_string(std::max<std::int64_t>({0, dim.min, dim.max})) + "]");
    }
    return dim;
  }
  if (const auto* table = e.value->as_table()) {
    const TableReader r(diag, *table, "ops.schema.dims.NAME", "dim '" + e.name + "'");
    TRY(r.only_keys());
    const toml::array* candidates = TRY(r.array("candidates"));
    if (candidates == nullptr || candidates->empty()) {
      return diag.at(*e.value, "dim '" + e.name + "' needs a non-empty candidates list", example);
    }
    for (const toml::node& c : *candidates) {
      if (!c.is_integer()) return r.type_error("candidates", c, "an array of positive integers");
      dim.candidates.push_back(TRY(positive_integer(diag, c, "a candidate of dim '" + e.name + "'")));
    }
    dim.min = *std::min_element(dim.candidates.begin(), dim.candidates.end());
    dim.max = *std::max_element(dim.candidates.begin(), dim.candidates.end());
    return dim;
  }
  return diag.at(*e.value,
                 "wrong type for dim '" + e.name +
                     "': expected a range [min, max] or a table { candidates = [...] }, "
                     "got " +
                     std::string(toml_type_phrase(*e.value)),
                 example);
}

// One entry of [ops.schema] tiles: NAME = size or [sizes], positive, for a dim declared in `dims`.
Expected<void> parse_tiles(const Diagnostics& diag, const Entry& e, std::vector<DimSpec>& dims) {
  const auto dim = std::find_if(dims.begin(), dims.end(), [&](const DimSpec& d) { return d.name == e.name; });
  if (dim == dims.end()) {
    return diag.at(*e.key, "tiles names dim '" + e.name + "', which [ops.schema] dims does not declare",
                   "declare it in dims, or remove it from tiles");
  }
  const std::string what = "a tile of dim '" + e.name + "'";
  if (e.value->is_integer()) {
    dim->tiles.push_back(TRY(positive_integer(diag, *e.value, what)));
    return {};
  }
  const auto* sizes = e.value->as_array();
  if (sizes == nullptr || sizes->empty() || !sizes->is_homogeneous(toml::node_type::integer)) {
    return diag.at(*e.value, "tiles of dim '" + e.name + "' must be a positive integer or an array of them",
                   "write " + e.name + " = 128 or " + e.name + " = [64, 128]");
  }
  for (const toml::node& size : *sizes) dim->tiles.push_back(TRY(positive_integer(diag, size, what)));
  return {};
}

// A shape: dim names declared in `dims` (when a schema exists) or positive literal sizes.
// `user` says who uses it in messages: "input 'b'" or "the output".
Expected<std::vector<DimRef>> parse_shape(const Diagnostics& diag, const toml::node& node,
                                          const std::string& key, const std::string& user,
                                          const std::vector<DimSpec>* dims) {
  const std::string expected =
      dims != nullptr ? "an array of dim names or positive integers" : "an array of positive integers";
  const auto* arr = node.as_array();
  if (arr == nullptr) {
    return diag.at(node, "wrong type for '" + key + "': expected " + expected + ", got " +
                             std::string(toml_type_phrase(node)));
  }
  std::vector<DimRef> shape;
  for (const toml::node& element : *arr) {
    if (element.is_integer()) {
      shape.emplace_back(TRY(positive_integer(diag, element, "a size in the shape of " + user)));
    } else if (const auto* name = element.as_string(); name != nullptr && dims != nullptr) {
      const std::string& dim = name->get();
      const bool declared =
          std::any_of(dims->begin(), dims->end(), [&](const DimSpec& d) { return d.name == dim; });
      if (!declared) {
        return diag.at(element,
                       "dim '" + dim + "' is used by " + user + " but not declared in [ops.schema] dims",
                       "add " + dim + " = [1, 128] to dims");
      }
      shape.emplace_back(dim);
    } else if (element.is_string()) {
      return diag.at(
          element, "dim names in 'shape' need an [ops.schema]",
          "declare the dim in [ops.schema] dims and give the shape there, or write a literal size");
    } else {
      return diag.at(element, "wrong type for '" + key + "': expected " + expected + ", got " +
                                  std::string(toml_type_phrase(element)));
    }
  }
  return shape;
}

Expected<OpSchema> parse_schema(const Diagnostics& diag, const toml::table& table) {
  OpSchema schema;
  const TableReader r(diag, table, "ops.schema", "[ops.schema]");
  TRY(r.only_keys());
  if (const toml::table* dims = TRY(r.subtable("dims"))) {
    for (const Entry& e : entries_in_file_order(*dims)) schema.dims.push_back(TRY(parse_dim(diag, e)));
  }
  const toml::table* inputs = TRY(r.subtable("inputs"));
  if (inputs == nullptr || inputs->empty()) {
    return r.error("[ops.schema] has no 'inputs'", "add inputs = { a = [\"M\", \"K\"], b = [\"K\", \"N\"] }");
  }
  for (const Entry& e : entries_in_file_order(*inputs)) {
    schema.inputs.emplace_back(
        e.name, TRY(parse_shape(diag, *e.value, e.name, "input '" + e.name + "'", &schema.dims)));
  }
  if (const toml::node* output = r.node("output")) {
    schema.output = TRY(parse_shape(diag, *output, "output", "the output", &schema.dims));
  }
  if (const toml::table* tiles = TRY(r.subtable("tiles"))) {
    for (const Entry& e : entries_in_file_order(*tiles)) TRY(parse_tiles(diag, e, schema.dims));
  }
  return schema;
}

Expected<rng::Domain> parse_domain(const Diagnostics& diag, const toml::node& node) {
  const std::string hint = "write domain = [lo, hi] or domain = \"any\" (every finite value of the dtype)";
  rng::Domain domain;
  if (const auto* s = node.as_string()) {
    if (s->get() != "any") return diag.at(node, "unknown domain '" + s->get() + "'", hint);
    domain.any = true;
    return domain;
  }
  const auto* arr = node.as_array();
  const bool two_numbers =
      arr != nullptr && arr->size() == 2 && (*arr)[0].is_number() && (*arr)[1].is_number();
  if (!two_numbers) {
    return diag.at(
        node,
        "wrong type for 'domain': expected [lo, hi] or \"any\", got " + std::string(toml_type_phrase(node)),
        hint);
  }
  domain.lo = (*arr)[0].value<double>().value_or(0);
  domain.hi = (*arr)[1].value<double>().value_or(0);
  if (!std::isfinite(domain.lo) || !std::isfinite(domain.hi) || domain.lo > domain.hi) {
    return diag.at(
        node,
        "bad domain [" + number_text(domain.lo) + ", " + number_text(domain.hi) + "]: need finite lo <= hi",
        hint);
  }
  return domain;
}

Expected<InputSpec> parse_input(const Diagnostics& diag, const Entry& e, bool has_schema) {
  InputSpec input;
  input.name = e.name;
  const auto* table = e.value->as_table();
  if (table == nullptr) {
    return diag.at(*e.value, "wrong type for input '" + e.name + "': expected a table, got " +
                                 std::string(toml_type_phrase(*e.value)));
  }
  const TableReader r(diag, *table, "ops.inputs.NAME", "[ops.inputs." + e.name + "]");
  TRY(r.only_keys());
  if (const toml::node* domain = r.node("domain")) input.domain = TRY(parse_domain(diag, *domain));
  if (auto dtype = TRY(r.string_item("dtype"))) input.dtype = TRY(parse_dtype_item(diag, *dtype));
  if (const toml::node* shape = r.node("shape")) {
    if (has_schema) {
      return diag.at(*shape, "input '" + e.name + "' has its shape in [ops.schema] inputs",
                     "remove 'shape' here, or remove [ops.schema] to give literal shapes");
    }
    input.shape = TRY(parse_shape(diag, *shape, "shape", "input '" + e.name + "'", nullptr));
  }
  return input;
}

}  // namespace

Expected<void> parse_op_inputs(const TableReader& r, OpConfig& op) {
  const Diagnostics& diag = r.diag();
  // What an op that `extends` another starts from: the parent's inputs, re-derived below.
  const std::vector<std::string> inherited_names = std::move(op.input_names);
  std::map<std::string, InputSpec> inherited = std::move(op.inputs);
  op.input_names.clear();
  op.inputs.clear();
  if (const toml::table* schema = TRY(r.subtable("schema"))) op.schema = TRY(parse_schema(diag, *schema));
  const toml::table* inputs = TRY(r.subtable("inputs"));

  // input_names: explicit, else the schema's inputs, else [ops.inputs], else a single "x".
  const auto explicit_names = TRY(r.strings("input_names"));
  if (explicit_names) {
    if (explicit_names->empty()) return diag.at(*r.node("input_names"), "'input_names' must not be empty");
    for (const StringItem& item : *explicit_names) {
      if (item.value.empty()) return diag.at(*item.node, "input names must not be empty");
      if (std::find(op.input_names.begin(), op.input_names.end(), item.value) != op.input_names.end()) {
        return diag.at(*item.node, "input '" + item.value + "' is listed twice in 'input_names'");
      }
      if (op.schema && std::none_of(op.schema->inputs.begin(), op.schema->inputs.end(),
                                    [&](const auto& in) { return in.first == item.value; })) {
        return diag.at(*item.node, "input '" + item.value + "' has no shape in [ops.schema] inputs",
                       "add " + item.value + " = [...] to inputs in [ops.schema]");
      }
      op.input_names.push_back(item.value);
    }
  } else if (op.schema) {
    for (const auto& [name, shape] : op.schema->inputs) op.input_names.push_back(name);
  } else if (!inherited_names.empty()) {
    op.input_names = inherited_names;
  } else if (inputs != nullptr && !inputs->empty()) {
    for (const Entry& e : entries_in_file_order(*inputs)) op.input_names.push_back(e.name);
  } else {
    op.input_names = {"x"};
  }
  const std::vector<std::string_view> names(op.input_names.begin(), op.input_names.end());
  if (op.schema && explicit_names && r.node("schema") != nullptr) {
    const toml::table& schema_inputs = *(*r.node("schema")->as_table())["inputs"].as_table();
    for (const Entry& e : entries_in_file_order(schema_inputs)) {
      if (std::find(names.begin(), names.end(), e.name) != names.end()) continue;
      return diag.at(*e.key, "input '" + e.name + "' is in [ops.schema] inputs but not in input_names",
                     "add it to input_names or remove it here");
    }
  } else if (op.schema && explicit_names) {  // the schema is inherited through `extends`
    for (const auto& [name, shape] : op.schema->inputs) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      return diag.at(*r.node("input_names"),
                     "input '" + name + "' is in the inherited [ops.schema] inputs but not in input_names",
                     "add it to input_names");
    }
  }

  for (const std::string& name : op.input_names) {
    auto it = inherited.find(name);
    op.inputs[name] = it != inherited.end() ? it->second : InputSpec{};
    op.inputs[name].name = name;
    if (op.schema) op.inputs[name].shape.clear();  // shapes come from the schema
  }
  if (inputs != nullptr) {
    for (const Entry& e : entries_in_file_order(*inputs)) {
      if (std::find(names.begin(), names.end(), e.name) == names.end()) {
        std::string hint = util::did_you_mean(e.name, names);
        if (hint.empty()) hint = "the inputs of this op are " + util::quoted_list(names);
        return diag.at(*e.key, "[ops.inputs] names unknown input '" + e.name + "' of op '" + op.name + "'",
                       hint);
      }
      op.inputs[e.name] = TRY(parse_input(diag, e, op.schema.has_value()));
    }
  }
  if (!op.schema) {
    for (auto& [name, spec] : op.inputs) {
      if (spec.shape.empty()) {
        spec.shape.assign(kDefaultInputShape.begin(), kDefaultInputShape.end());
        spec.shape_defaulted = true;
      }
    }
  }
  return {};
}

}  // namespace gpuemu::config
