// compare_outputs: structural checks (missing outputs, shapes, dtypes), the element statistics,
// then invariants, reduced to one verdict whose kind is the worst failure found.
#include "check/compare.hpp"

#include <fmt/format.h>

#include <memory>

#include "check/element_stats.hpp"
#include "check/invariants.hpp"
#include "check/verdict_text.hpp"

namespace gpuemu::check {
namespace {

// The first problem of each kind, in the order the worst one wins (compare.hpp). Views that fail
// validate_view come first: nothing can be compared through a buffer that is too short.
class Problems {
 public:
  void note(FailureKind kind, std::string message) {
    for (auto& [k, m] : found_) {
      if (k == kind) return;  // keep the first of each kind
    }
    found_.emplace_back(kind, std::move(message));
  }
  bool empty() const { return found_.empty(); }
  std::pair<FailureKind, std::string> worst() const {
    static constexpr FailureKind kOrder[] = {
        FailureKind::reference_error,      FailureKind::op_error,       FailureKind::missing_output,
        FailureKind::shape_mismatch,       FailureKind::dtype_mismatch, FailureKind::nonfinite_mismatch,
        FailureKind::unexpected_nonfinite, FailureKind::mismatch,       FailureKind::invariant_violation,
    };
    for (FailureKind kind : kOrder) {
      for (const auto& [k, m] : found_) {
        if (k == kind) return {k, m};
      }
    }
    return {FailureKind::none, ""};
  }

 private:
  std::vector<std::pair<FailureKind, std::string>> found_;
};

std::string names_of(const Outputs& outputs) {
  std::vector<std::string> names;
  for (const auto& [name, t] : outputs) names.push_back("'" + name + "'");
  return names.empty() ? "nothing" : fmt::format("{}", fmt::join(names, ", "));
}

std::string describe(const ElementDiff& d, const Outputs& actual, const Outputs& reference) {
  const auto out_dtype = actual.at(d.output).dtype;
  const auto ref_dtype = reference.at(d.output).dtype;
  return fmt::format("{}: got {}, expected {}", format_element(d.output, d.index),
                     format_value(d.actual, out_dtype), format_value(d.expected, ref_dtype));
}

std::string count_of(std::int64_t count, std::int64_t elements) {
  return fmt::format(
      "{} of {} elements ({}%)", count, elements,
      format_percent(elements > 0 ? static_cast<double>(count) / static_cast<double>(elements) : 0.0));
}

void note_element_failures(const StatsAccumulator& acc, const ErrorStats& stats,
                           const CompareOptions& options, const Outputs& actual, const Outputs& reference,
                           Problems& problems) {
  if (acc.nonfinite_mismatches() > 0) {
    problems.note(
        FailureKind::nonfinite_mismatch,
        fmt::format("{} disagree with the reference on NaN/Inf (the op must have NaN and Inf exactly "
                    "where the reference does); first {}",
                    count_of(acc.nonfinite_mismatches(), stats.elements),
                    describe(*acc.first_nonfinite(), actual, reference)));
  }
  if (acc.unexpected_nonfinite() > 0) {
    const ElementDiff& first = *acc.first_unexpected();
    problems.note(FailureKind::unexpected_nonfinite,
                  fmt::format("{} are NaN/Inf where the reference is finite; first {}",
                              count_of(acc.unexpected_nonfinite(), stats.elements),
                              describe(first, actual, reference)));
  }
  if (acc.finite_mismatches() > 0 && !stats.worst.empty()) {
    const ElementDiff& w = stats.worst.front();
    problems.note(
        FailureKind::mismatch,
        fmt::format("{} outside atol={} + rtol={}*|ref|; worst {} (abs {}, rel {})",
                    count_of(acc.finite_mismatches(), stats.elements), format_short(options.tolerance.atol),
                    format_short(options.tolerance.rtol), describe(w, actual, reference),
                    format_short(w.abs_err), format_short(w.rel_err)));
  }
}

// shape_preserved means "the output has the shape of the first input" (compare.hpp); without
// input shapes it falls back to the reference output's shape.
void note_invariant_failures(const Outputs& actual, const Outputs& reference, const CompareOptions& options,
                             Problems& problems) {
  for (const auto& [name, ref] : reference) {
    const auto it = actual.find(name);
    if (it == actual.end()) continue;
    const bool from_input = !options.input_shapes.empty();
    const tensor::Shape& expected_shape = from_input ? options.input_shapes.front() : ref.shape;
    const std::string source = from_input ? "the first input" : "the reference output";
    for (Invariant inv : options.invariants) {
      if (auto message =
              find_invariant_violation(inv, name, it->second, expected_shape, source, options.tolerance)) {
        problems.note(FailureKind::invariant_violation, std::move(*message));
        return;
      }
    }
  }
}

}  // namespace

// One output on each side is the same output whatever the two are called: the FAQ's reference
// answers {"outputs": {"result": ...}} for an op that returns one tensor (named "out"). The op's
// tensor is then compared under the reference's name, so messages name the reference's output.
std::optional<Outputs> paired_single_output(const Outputs& actual, const Outputs& reference) {
  if (actual.size() != 1 || reference.size() != 1) return std::nullopt;
  const auto& [ref_name, ref] = *reference.begin();
  const tensor::Tensor& op_out = actual.begin()->second;
  if (actual.begin()->first == ref_name) return std::nullopt;
  // A view of the op's bytes (which outlive the comparison), not a copy: outputs can be large.
  tensor::Tensor renamed{op_out.dtype, op_out.shape, op_out.strides, {}};
  const std::shared_ptr<const void> unowned(std::shared_ptr<const void>{}, op_out.data.data());
  renamed.data = tensor::Storage::view(unowned, {op_out.data.data(), op_out.data.size()});
  return Outputs{{ref_name, std::move(renamed)}};
}

Verdict compare_outputs(const Outputs& given, const Outputs& reference, const CompareOptions& options) {
  const std::optional<Outputs> paired = paired_single_output(given, reference);
  const Outputs& actual = paired ? *paired : given;
  Problems problems;
  StatsAccumulator acc(ElementRules{options.tolerance, options.check_nan, options.check_inf});
  for (const auto& [name, ref] : reference) {
    if (auto ok = tensor::validate_view(ref, "reference output '" + name + "'"); !ok) {
      problems.note(FailureKind::reference_error, ok.error().message);
      continue;
    }
    if (options.declared_output && ref.shape != *options.declared_output) {
      const std::string hint =
          options.declare_output_hint ? "; " + options.declare_output_hint(ref.shape) : std::string();
      problems.note(FailureKind::reference_error,
                    fmt::format("reference output '{}' has shape {}, but {} is {}: fix the reference (or the "
                                "declaration); a reference of the wrong shape cannot judge the op{}",
                                name, tensor::shape_to_string(ref.shape), options.declared_output_source,
                                tensor::shape_to_string(*options.declared_output), hint));
      continue;
    }
    const auto it = actual.find(name);
    if (it == actual.end()) {
      problems.note(
          FailureKind::missing_output,
          fmt::format("the op's answer has no output '{}' (it returned {}); return every output the "
                      "reference returns, under the same name",
                      name, names_of(actual)));
      continue;
    }
    const tensor::Tensor& out = it->second;
    if (auto ok = tensor::validate_view(out, "output '" + name + "' of the op"); !ok) {
      problems.note(FailureKind::op_error, ok.error().message);
      continue;
    }
    if (options.expected_dtype && out.dtype != *options.expected_dtype) {
      const auto want = tensor::dtype_name(*options.expected_dtype);
      problems.note(
          FailureKind::dtype_mismatch,
          fmt::format("output '{}' has dtype {}, expected {} (the case dtype); cast the result to {} "
                      "before returning it",
                      name, tensor::dtype_name(out.dtype), want, want));
    }
    if (out.shape != ref.shape) {
      problems.note(FailureKind::shape_mismatch,
                    fmt::format("output '{}' has shape {}, expected {} (the reference's shape)", name,
                                tensor::shape_to_string(out.shape), tensor::shape_to_string(ref.shape)));
      continue;
    }
    acc.add_output(name, out, ref);
  }

  Verdict verdict;
  verdict.stats = acc.finish();
  note_element_failures(acc, verdict.stats, options, actual, reference, problems);
  if (problems.empty() && !options.invariants.empty()) {
    note_invariant_failures(actual, reference, options, problems);
  }
  auto [kind, message] = problems.worst();
  verdict.kind = kind;
  verdict.message = std::move(message);
  return verdict;
}

}  // namespace gpuemu::check
