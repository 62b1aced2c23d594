// Queries on the loaded Config model: execution-mode names, op lookup and the tolerance
// precedence (op override, then [validation.tolerances], then the built-in default).
#include "config/config.hpp"

namespace gpuemu::config {

std::string_view execution_mode_name(ExecutionMode mode) {
  switch (mode) {
    case ExecutionMode::script_based:
      return "script_based";
    case ExecutionMode::client_side:
      return "client_side";
    case ExecutionMode::daemon_orchestrated:
      return "daemon_orchestrated";
  }
  return "script_based";
}

std::optional<ExecutionMode> parse_execution_mode(std::string_view name) {
  for (auto mode :
       {ExecutionMode::script_based, ExecutionMode::client_side, ExecutionMode::daemon_orchestrated}) {
    if (execution_mode_name(mode) == name) return mode;
  }
  return std::nullopt;
}

const OpConfig* Config::find_op(std::string_view name) const {
  for (const OpConfig& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

check::ToleranceSpec Config::tolerance_for(const OpConfig& op, tensor::DType dtype) const {
  if (const auto it = op.tolerances.find(dtype); it != op.tolerances.end()) return it->second;
  if (const auto it = validation.tolerances.find(dtype); it != validation.tolerances.end()) return it->second;
  return check::default_tolerance(dtype);
}

}  // namespace gpuemu::config
