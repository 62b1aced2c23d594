// An op without [ops.schema] whose inputs all take the default shape (docs/configuration.md,
// "Default input shape"): refused wherever gpuemu makes its inputs, with the schema to declare.
#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"

namespace gpuemu::config {

// For an op without [ops.schema] with two or more inputs, none of which declares `shape`: all of them
// would be kDefaultInputShape, which only an op whose inputs share one shape accepts (a matmul's do
// not). The error, at the op's [[ops]] table, naming [ops.schema] and the lines to write; nullopt for
// every other op.
std::optional<std::string> undeclared_input_shapes(const OpConfig& op);

}  // namespace gpuemu::config
