// validate and submit_output (client-side and daemon-orchestrated modes): the client ran the op;
// the daemon runs the reference on the same inputs, compares, and stores the case so a failure can
// be reproduced (from its input snapshot) and minimized later.
#include <fmt/format.h>

#include "daemon/record_json.hpp"
#include "daemon/request_table.hpp"
#include "engine/executor.hpp"
#include "engine/plans.hpp"
#include "engine/replay.hpp"

namespace gpuemu::daemon {
namespace {

Result<std::map<std::string, std::int64_t>> read_dims(const Fields& fields) {
  std::map<std::string, std::int64_t> dims;
  const auto object = TRY(fields.optional_object("dims"));
  if (!object) return dims;
  for (const auto& [name, value] : object->items()) {
    if (!value.is_number_integer()) {
      return reject(WireError::bad_request,
                    fmt::format("{} request: \"dims\" must map dim names to integers; '{}' is not one",
                                fields.request(), name));
    }
    dims[name] = value.get<std::int64_t>();
  }
  return dims;
}

// The case dtype: the "dtype" field, else the first floating output's, else the first input's.
Result<tensor::DType> case_dtype(const Fields& fields, const tensor::NamedTensors& inputs,
                                 const tensor::NamedTensors& outputs) {
  if (auto dtype = TRY(fields.optional_choice("dtype", tensor::parse_dtype, kDtypeChoices))) return *dtype;
  for (const auto& [name, t] : outputs) {
    if (tensor::is_floating(t.dtype)) return t.dtype;
  }
  return inputs.empty() ? tensor::DType::float32 : inputs.begin()->second.dtype;
}

Result<fuzz::CaseParams> case_params(const Fields& fields, const tensor::NamedTensors& inputs,
                                     const tensor::NamedTensors& outputs) {
  fuzz::CaseParams params;
  params.dtype = TRY(case_dtype(fields, inputs, outputs));
  if (auto layout = TRY(fields.optional_choice("layout", tensor::parse_layout, kLayoutChoices))) {
    params.layout = *layout;
  } else {
    for (const auto& [name, t] : inputs) {
      if (!t.is_contiguous()) params.layout = tensor::Layout::strided;
    }
  }
  if (auto distribution = TRY(fields.optional_choice("distribution", rng::parse_distribution,
                                                     "regular, boundary or adversarial"))) {
    params.distribution = *distribution;
  }
  return params;
}

Result<check::FailureKind> client_failure_kind(const nlohmann::json& failure, const std::string& request) {
  const auto kind_field = failure.find("kind");
  const auto kind = kind_field != failure.end() && kind_field->is_string()
                        ? check::parse_failure_kind(kind_field->get<std::string>())
                        : std::nullopt;
  if (!kind || *kind == check::FailureKind::none) {
    return reject(WireError::bad_request,
                  fmt::format("{} request: client_failure.kind must be a failure kind such as input_mutated, "
                              "output_aliased or op_error",
                              request));
  }
  return *kind;
}

Result<Reply> validate_given_output(DaemonState& state, Message& message, const Fields& fields) {
  const auto started = std::chrono::steady_clock::now();
  const auto client_failure = TRY(fields.optional_object("client_failure"));
  fuzz::Case c;
  c.inputs = take_tensors(message, "input/");
  auto outputs = take_tensors(message, "output/");
  if (c.inputs.empty() || (outputs.empty() && !client_failure)) {
    return reject(
        WireError::bad_request,
        fmt::format("{} request needs tensors named input/NAME (the op's inputs) and output/NAME (what the "
                    "op returned; a single output is output/out)",
                    fields.request()));
  }
  const auto config = TRY(state.config(message.header));
  // Before anything reads the tensors: a zero-stride view of a huge shape costs nothing to send
  // and everything to materialise.
  TRY(check_case_size(size_of({&c.inputs, &outputs}), TRY(request_limits(*config, fields)),
                      fields.request() + " request: the case (input/* and output/* as full views)"));
  const auto* op = TRY(state.op(*config, TRY(fields.string("op"))));
  const std::uint64_t seed = engine::resolve_master_seed(TRY(fields.optional_seed("seed")), *config);
  const auto minimized_from = TRY(fields.optional_seed("minimized_from"));
  c.op = op->name;
  c.seed = seed;

  for (const auto& name : op->input_names) {
    if (c.inputs.contains(name)) c.input_order.push_back(name);
  }
  for (const auto& [name, t] : c.inputs) {
    if (std::find(c.input_order.begin(), c.input_order.end(), name) == c.input_order.end())
      c.input_order.push_back(name);
  }
  c.params = TRY(case_params(fields, c.inputs, outputs));
  c.dims = TRY(read_dims(fields));

  nlohmann::json kwargs = op->kwargs.is_object() ? op->kwargs : nlohmann::json::object();
  if (auto extra = TRY(fields.optional_object("kwargs"))) kwargs.update(*extra);

  result::CaseRecord record;
  if (client_failure) {
    // The client's guard caught the op before any comparison: record what it saw, no reference run.
    record.op = op->name;
    record.seed = seed;
    record.params = c.params;
    record.dims = c.dims;
    record.shapes = c.shapes();
    record.tolerance = config->tolerance_for(*op, c.params.dtype);
    record.inputs = std::make_shared<const tensor::NamedTensors>(c.inputs);
    record.verdict.kind = TRY(client_failure_kind(*client_failure, fields.request()));
    const auto text = client_failure->find("message");
    record.verdict.message = text != client_failure->end() && text->is_string()
                                 ? text->get<std::string>()
                                 : "the client reported a failure";
  } else {
    auto session = state.session(config, *op);
    record = TRY(session->check_output(c, std::move(outputs), &kwargs));
  }
  const auto at = util::now_millis();
  const auto duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
          .count();

  // Stored before the reply: a client that saw "stored" can rely on it after a kill -9.
  bool stored = false;
  std::optional<store::FailureId> failure_id;
  if (minimized_from) {
    const auto original = TRY(state.store().find_failure(*minimized_from, op->name));
    if (!original) {
      return reject(WireError::not_found,
                    fmt::format("minimized_from: no stored failure with seed {} of op '{}'", *minimized_from,
                                op->name));
    }
    if (!record.verdict.passed()) {
      failure_id = TRY(state.store().record_minimized(original->id, record));
      stored = true;
    }
  } else {
    result::RunResult run;
    run.command = fields.request();
    run.master_seed = seed;
    run.config_digest = engine::client_inputs_digest(config->digest);
    run.project = config->project.name;
    run.duration_secs = static_cast<double>(duration_ms) / 1000.0;
    run.ops.push_back(engine::summarize_op(*config, *op, {record}));
    // One case has one dtype: no empty rows for the op's other dtypes.
    std::erase_if(run.ops.back().dtypes, [](const result::DtypeSummary& d) { return d.total == 0; });
    TRY(state.store().record_run(run));
    stored = !record.verdict.passed();
  }
  Reply reply;
  reply.header["result"] = record_json(record, at, duration_ms, stored, failure_id);
  // [policies] warn_threshold: a pass that used most of its tolerance (docs/protocol.md "validate").
  nlohmann::json warnings = nlohmann::json::array();
  if (auto warning = engine::tolerance_warning(*config, record)) warnings.push_back(std::move(*warning));
  reply.header["result"]["warnings"] = std::move(warnings);
  return reply;
}

}  // namespace

Result<Reply> handle_validate(DaemonState& state, Message& message, const Fields& fields) {
  return validate_given_output(state, message, fields);
}

Result<Reply> handle_submit_output(DaemonState& state, Message& message, const Fields& fields) {
  return validate_given_output(state, message, fields);
}

}  // namespace gpuemu::daemon
