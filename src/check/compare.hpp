// Compares an op's outputs with the reference's: the pass rule, non-finite rules, statistics
// and invariants of DESIGN section 4, all in double after exact decoding of each dtype.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/tolerance.hpp"
#include "check/verdict.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::check {

enum class Invariant : int {
  shape_preserved = 0,
  non_negative = 1,
  finite = 2,
  symmetric = 3,
  normalized = 4,
};
std::string_view invariant_name(Invariant invariant);
std::optional<Invariant> parse_invariant(std::string_view name);
const std::vector<std::string_view>& all_invariant_names();

struct CompareOptions {
  ToleranceSpec tolerance;
  bool check_nan = true;
  bool check_inf = true;
  // When set, an output of another dtype is a dtype_mismatch (the op must answer in the case dtype).
  std::optional<tensor::DType> expected_dtype;
  std::vector<Invariant> invariants;
  // Shapes of the inputs, for shape_preserved ("output has the shape of the first input").
  std::vector<tensor::Shape> input_shapes;
  // The shape every output must have, known before anything ran: [ops.schema] output resolved with
  // the case's dims, or the first input's under shape_preserved (op_session.cpp). A reference output
  // of another shape is a reference_error, an op output of another shape a shape_mismatch, so a
  // wrong shape cannot pass by matching an equally wrong reference.
  std::optional<tensor::Shape> declared_output;
  std::string declared_output_source;  // for messages: "[ops.schema] output", ...
  // When set (shape_preserved without a declared output): given a reference output's other shape,
  // what to declare if that shape is right, appended to the reference_error's message.
  std::function<std::string(const tensor::Shape&)> declare_output_hint;
};

using Outputs = tensor::NamedTensors;

// The verdict for one case. Every output of the reference must appear in `actual` under the
// same name; extra outputs of the op are ignored. When each side has exactly one output, the two
// are the same output whatever their names (an op's "out" against a reference's "result"). The worst failing
// kind wins, in this order: missing_output, shape_mismatch, dtype_mismatch, nonfinite_mismatch,
// unexpected_nonfinite, mismatch, invariant_violation.
Verdict compare_outputs(const Outputs& actual, const Outputs& reference, const CompareOptions& options);

// The one-output rule of compare_outputs: when each side has exactly one output under different
// names, the op's output renamed to the reference's (a view, no copy); nullopt otherwise, when the
// outputs pair by name. Whatever compares outputs (calibrate too) pairs them this way.
std::optional<Outputs> paired_single_output(const Outputs& actual, const Outputs& reference);

}  // namespace gpuemu::check
