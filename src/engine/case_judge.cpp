// The judging of one op's cases (case_judge.hpp): the record, the verdict from the reference's and
// the op's answers, and the snapshot of a failure's inputs.
#include "engine/case_judge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <variant>

#include "engine/output_hint.hpp"

namespace gpuemu::engine {
namespace {

// The kind of a failed call: the one the op's worker named when it judged the call itself (one of
// the kinds a worker may name, docs/worker-protocol.md "error"), else op_error / reference_error.
check::FailureKind error_kind(const std::string& role, const proc::RunOutcome& outcome) {
  using check::FailureKind;
  if (role == "reference") return FailureKind::reference_error;
  if (const auto named = check::parse_failure_kind(outcome.failure_kind)) {
    switch (*named) {
      case FailureKind::input_mutated:
      case FailureKind::output_aliased:
      case FailureKind::out_of_bounds:
      case FailureKind::interpreter_unsupported:
      case FailureKind::kernel_not_launched:
        return *named;
      default:
        break;
    }
  }
  return FailureKind::op_error;
}

bool all_floating(const tensor::NamedTensors& outputs) {
  for (const auto& [name, t] : outputs) {
    if (!tensor::is_floating(t.dtype)) return false;
  }
  return !outputs.empty();
}

}  // namespace

// The output shape a case must produce, when the config says it (docs/configuration.md): the
// schema's `output` with the case's dims; else, under shape_preserved, the first input's shape.
void CaseJudge::declare_output_shape(check::CompareOptions& options, const fuzz::Case& c) const {
  if (op_.schema && !op_.schema->output.empty()) {
    // The case's dims; a client's case (check_output) has none, so read them off its input shapes.
    std::map<std::string, std::int64_t> dims = c.dims;
    for (const auto& [input, refs] : op_.schema->inputs) {
      const auto it = c.inputs.find(input);
      if (it == c.inputs.end() || it->second.shape.size() != refs.size()) continue;
      for (std::size_t k = 0; k < refs.size(); ++k) {
        if (const auto* name = std::get_if<std::string>(&refs[k]))
          dims.try_emplace(*name, it->second.shape[k]);
      }
    }
    tensor::Shape shape;
    for (const auto& ref : op_.schema->output) {
      if (const auto* literal = std::get_if<std::int64_t>(&ref)) {
        shape.push_back(*literal);
      } else if (auto it = dims.find(std::get<std::string>(ref)); it != dims.end()) {
        shape.push_back(it->second);
      } else {
        return;  // a dim no input shows (a client's op_schema): nothing declared for it
      }
    }
    options.declared_output = std::move(shape);
    options.declared_output_source = "[ops.schema] output";
    return;
  }
  const bool preserved =
      std::ranges::find(op_.invariants, check::Invariant::shape_preserved) != op_.invariants.end();
  if (preserved && !c.input_order.empty()) {
    if (auto it = c.inputs.find(c.input_order.front()); it != c.inputs.end()) {
      options.declared_output = it->second.shape;
      options.declared_output_source =
          fmt::format("the shape of the first input '{}' (shape_preserved)", it->first);
      // A reduction's reference answers another shape: say which output to declare.
      options.declare_output_hint = [this, &c](const tensor::Shape& seen) {
        return declare_output_hint(op_, c, seen);
      };
    }
  }
}

result::CaseRecord CaseJudge::new_record(const fuzz::Case& c) const {
  result::CaseRecord record;
  record.op = op_.name;
  record.seed = c.seed;
  record.params = c.params;
  record.dims = c.dims;
  record.corner = c.corner;
  record.shapes = c.shapes();
  record.tolerance = config_.tolerance_for(op_, c.params.dtype);
  return record;
}

// Failures keep a snapshot of their inputs (the store replays and minimizes from it); a passing
// case needs none, so its inputs are not copied.
void CaseJudge::keep_inputs_if_failed(result::CaseRecord& record, const fuzz::Case& c) {
  if (record.verdict.passed()) return;
  // The snapshot outlives the request: it must not view a client's segment or message.
  auto inputs = c.inputs;
  for (auto& [name, t] : inputs) t.data.own();
  record.inputs = std::make_shared<const tensor::NamedTensors>(std::move(inputs));
}

void CaseJudge::judge(result::CaseRecord& record, const fuzz::Case& c, const proc::RunOutcome& ref,
                      const proc::RunOutcome& out, bool expect_case_dtype) const {
  // A broken reference cannot judge anything; it wins over a broken op.
  for (const auto* failed : {&ref, &out}) {
    if (!failed->ok()) {
      const std::string role = failed == &ref ? "reference" : "op";
      record.verdict.kind = error_kind(role, *failed);
      record.verdict.message = failed->message;
      record.stderr_tail = failed->stderr_tail;
      return;
    }
  }
  check::CompareOptions options;
  options.tolerance = record.tolerance;
  options.check_nan = config_.validation.check_nan;
  options.check_inf = config_.validation.check_inf;
  options.invariants = op_.invariants;
  if (expect_case_dtype && tensor::is_floating(c.params.dtype) && all_floating(ref.outputs))
    options.expected_dtype = c.params.dtype;
  declare_output_shape(options, c);
  record.verdict = check::compare_outputs(out.outputs, ref.outputs, options);
  if (!record.verdict.passed()) record.stderr_tail = out.stderr_tail;
}

}  // namespace gpuemu::engine
