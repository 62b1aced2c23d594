// get_test_case and get_test_batch (daemon-orchestrated mode): cases generated exactly as
// `gpuemu fuzz --seed SEED` generates them, optionally under a client's op_schema or dtypes.
#include <fmt/format.h>

#include "daemon/record_json.hpp"
#include "daemon/request_table.hpp"
#include "engine/plans.hpp"
#include "fuzz/case.hpp"
#include "fuzz/corners.hpp"

namespace gpuemu::daemon {
namespace {

RequestError schema_error(const std::string& what) {
  return RequestError(
      WireError::bad_request,
      fmt::format("op_schema: {}; expected {{\"dims\": [{{\"name\": \"M\", \"candidates\": [1, 64]}} or "
                  "{{\"name\": \"K\", \"min\": 1, \"max\": 128}}], \"inputs\": [{{\"name\": \"a\", "
                  "\"dims\": [\"M\", \"K\"]}}], \"output\": {{\"name\": \"out\", \"dims\": [...]}}}}",
                  what));
}

Result<std::vector<config::DimRef>> dim_refs(const nlohmann::json& list, const std::string& owner,
                                             const std::vector<config::DimSpec>& dims) {
  if (!list.is_array()) return std::unexpected(schema_error(owner + " needs \"dims\": a list"));
  std::vector<config::DimRef> refs;
  for (const auto& item : list) {
    if (item.is_string()) {
      const auto name = item.get<std::string>();
      const bool known =
          std::any_of(dims.begin(), dims.end(), [&](const config::DimSpec& d) { return d.name == name; });
      if (!known)
        return std::unexpected(
            schema_error(owner + " uses dim '" + name + "' that \"dims\" does not declare"));
      refs.emplace_back(name);
    } else if (item.is_number_integer() && item.get<std::int64_t>() >= 0) {
      refs.emplace_back(item.get<std::int64_t>());
    } else {
      return std::unexpected(schema_error(owner + " dims must be dim names or sizes >= 0"));
    }
  }
  return refs;
}

// The python-api op_schema dict as the config's schema.
Result<config::OpSchema> parse_op_schema(const nlohmann::json& object) {
  config::OpSchema schema;
  const auto dims = object.find("dims");
  if (dims == object.end() || !dims->is_array())
    return std::unexpected(schema_error("\"dims\" must be a list"));
  for (const auto& d : *dims) {
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) {
      return std::unexpected(schema_error("every dim needs a \"name\""));
    }
    config::DimSpec spec;
    spec.name = d["name"].get<std::string>();
    if (d.contains("candidates")) {
      const auto& c = d["candidates"];
      if (!c.is_array() || c.empty())
        return std::unexpected(schema_error("dim '" + spec.name + "' has empty candidates"));
      for (const auto& v : c) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > (1 << 24)) {
          return std::unexpected(
              schema_error("dim '" + spec.name + "' candidates must be integers from 1 to 16777216"));
        }
        spec.candidates.push_back(v.get<std::int64_t>());
      }
      spec.min = *std::min_element(spec.candidates.begin(), spec.candidates.end());
      spec.max = *std::max_element(spec.candidates.begin(), spec.candidates.end());
    } else if (d.contains("min") && d.contains("max") && d["min"].is_number_integer() &&
               d["max"].is_number_integer()) {
      spec.min = d["min"].get<std::int64_t>();
      spec.max = d["max"].get<std::int64_t>();
      if (spec.min < 1 || spec.max < spec.min || spec.max > (1 << 24)) {
        return std::unexpected(schema_error("dim '" + spec.name + "' needs 1 <= min <= max <= 16777216"));
      }
    } else {
      return std::unexpected(
          schema_error("dim '" + spec.name + "' needs \"candidates\" or \"min\" and \"max\""));
    }
    schema.dims.push_back(std::move(spec));
  }
  const auto inputs = object.find("inputs");
  if (inputs == object.end() || !inputs->is_array() || inputs->empty()) {
    return std::unexpected(schema_error("\"inputs\" must be a non-empty list"));
  }
  for (const auto& i : *inputs) {
    if (!i.is_object() || !i.contains("name") || !i["name"].is_string()) {
      return std::unexpected(schema_error("every input needs a \"name\""));
    }
    const auto name = i["name"].get<std::string>();
    schema.inputs.emplace_back(
        name, TRY(dim_refs(i.value("dims", nlohmann::json()), "input '" + name + "'", schema.dims)));
  }
  if (const auto output = object.find("output"); output != object.end() && output->is_object()) {
    schema.output = TRY(dim_refs(output->value("dims", nlohmann::json::array()), "output", schema.dims));
  }
  return schema;
}

// The op as this request sees it: its op_schema and dtypes replace the configured ones.
Result<config::OpConfig> request_op(const config::OpConfig& configured, const Fields& fields) {
  config::OpConfig op = configured;
  if (auto object = TRY(fields.optional_object("op_schema"))) {
    op.schema = TRY(parse_op_schema(*object));
    op.input_names.clear();
    std::map<std::string, config::InputSpec> inputs;
    for (const auto& [name, refs] : op.schema->inputs) {
      op.input_names.push_back(name);
      auto spec =
          configured.inputs.contains(name) ? configured.inputs.at(name) : config::InputSpec{.name = name};
      spec.shape.clear();
      inputs[name] = std::move(spec);
    }
    op.inputs = std::move(inputs);
  }
  if (auto dtypes = TRY(fields.optional_choices("dtypes", tensor::parse_dtype, kDtypeChoices))) {
    if (dtypes->empty())
      return reject(WireError::bad_request, fields.request() + " request: \"dtypes\" is empty");
    op.dtypes = std::move(*dtypes);
  }
  return op;
}

Result<Reply> test_cases(DaemonState& state, const Message& message, const Fields& fields,
                         std::int64_t count) {
  const auto config = TRY(state.config(message.header));
  const auto* configured = TRY(state.op(*config, TRY(fields.string("op"))));
  const config::OpConfig op = TRY(request_op(*configured, fields));
  const auto limits = TRY(request_limits(*config, fields));
  TRY(check_case_size(config::largest_case(op), limits,
                      fmt::format("{} request: op '{}' at its largest (every dim at its maximum)",
                                  fields.request(), op.name)));
  const std::uint64_t master = engine::resolve_master_seed(TRY(fields.optional_seed("seed")), *config);
  const auto start = TRY(fields.optional_int("start", 0, std::int64_t{1} << 53)).value_or(0);
  // "values": every case drawn from one value distribution (as fuzz's); "mixed" or absent: all three.
  fuzz::CaseFilter filter;
  if (auto distribution = TRY(fields.optional_choice("values", rng::parse_distribution, kValuesChoices))) {
    if (*distribution != rng::ValueDistribution::mixed) filter.distribution = *distribution;
  }
  Reply reply;
  config::CaseSize reply_size;
  nlohmann::json cases = nlohmann::json::array();
  for (std::int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<std::uint64_t>(start + i);
    const auto c = TRY(fuzz::generate_case(op, fuzz::run_case_seed(op, master, "fuzz", index, filter)));
    nlohmann::json shapes = nlohmann::json::object();
    for (const auto& [name, shape] : c.shapes()) shapes[name] = shape;
    cases.push_back({{"seed", std::to_string(c.seed)},
                     {"index", index},
                     {"dtype", tensor::dtype_name(c.params.dtype)},
                     {"layout", tensor::layout_name(c.params.layout)},
                     {"distribution", rng::distribution_name(c.params.distribution)},
                     {"dims", c.dims},
                     {"shapes", shapes},
                     {"input_order", c.input_order}});
    // The reply holds every case: together they stay within one case's byte limit.
    for (const auto& [name, t] : c.inputs) reply_size.add(t.shape, tensor::dtype_size(t.dtype));
    if (reply_size.bytes > limits.max_bytes) {
      return reject(WireError::bad_request,
                    fmt::format("{} request: the {} cases asked for hold more than {} bytes of inputs "
                                "(max_case_bytes bounds a reply too); ask for fewer cases per batch",
                                fields.request(), count, limits.max_bytes));
    }
    add_tensors(reply, c.inputs, c.input_order, fmt::format("case/{}/input/", i));
  }
  reply.header["seed"] = std::to_string(master);
  reply.header["op"] = op.name;
  reply.header["cases"] = std::move(cases);
  return reply;
}

}  // namespace

Result<Reply> handle_get_test_case(DaemonState& state, Message& message, const Fields& fields) {
  return test_cases(state, message, fields, 1);
}

Result<Reply> handle_get_test_batch(DaemonState& state, Message& message, const Fields& fields) {
  const auto count = TRY(fields.optional_int("count", 1, 10000)).value_or(10);
  return test_cases(state, message, fields, count);
}

}  // namespace gpuemu::daemon
