// What to declare when shape_preserved meets a reference whose output is not the first input's shape
// (a row reduction): the `output = [...]` line of [ops.schema], named with the case's own dims.
#pragma once

#include <string>

#include "config/config.hpp"
#include "fuzz/case.hpp"

namespace gpuemu::engine {

// For a case `c` of `op` (shape_preserved, no [ops.schema] output) whose reference answered `seen`:
// names the op and the line to add if `seen` is right: `output = ["M"]` under its [ops.schema], each
// size written as the dim of the case that has it (else as the number); an op without a schema gets
// the whole [ops.schema] that pins its inputs' present shapes and declares that output.
std::string declare_output_hint(const config::OpConfig& op, const fuzz::Case& c, const tensor::Shape& seen);

}  // namespace gpuemu::engine
