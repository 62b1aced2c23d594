// Parsers for the named values gpuemu.toml shares between sections: dtypes, tolerance tables,
// invariants, layouts and execution modes, each with "did you mean" on a misspelling.
#pragma once

#include <functional>
#include <map>
#include <string_view>
#include <vector>

#include "check/compare.hpp"
#include "check/tolerance.hpp"
#include "config/config.hpp"
#include "config/table_reader.hpp"
#include "tensor/dtype.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::config {

Expected<tensor::DType> parse_dtype_item(const Diagnostics& diag, const StringItem& item);

// A non-empty array of distinct dtypes under `key`, or nullopt when the key is absent.
Expected<std::optional<std::vector<tensor::DType>>> parse_dtype_list(const TableReader& reader,
                                                                     std::string_view key);

// A table `dtype = { atol = .., rtol = .. }`; a missing atol or rtol takes the value from
// `fallback(dtype)` (the next level of precedence).
Expected<std::map<tensor::DType, check::ToleranceSpec>> parse_tolerances(
    const TableReader& parent, std::string_view key, const std::string& context,
    const std::function<check::ToleranceSpec(tensor::DType)>& fallback);

Expected<std::optional<std::vector<check::Invariant>>> parse_invariant_list(const TableReader& reader,
                                                                            std::string_view key);
Expected<std::optional<std::vector<tensor::Layout>>> parse_layout_list(const TableReader& reader,
                                                                       std::string_view key);
Expected<std::optional<ExecutionMode>> parse_execution_mode_key(const TableReader& reader,
                                                                std::string_view key);

// A name that must be one of `allowed` (e.g. framework); `plural` names them in hints ("frameworks").
Expected<std::optional<std::string>> parse_choice(const TableReader& reader, std::string_view key,
                                                  const std::vector<std::string_view>& allowed,
                                                  std::string_view plural);

// framework = "numpy" | "pytorch" | "jax" | "tensorflow", or nullopt when the key is absent.
Expected<std::optional<Framework>> parse_framework_key(const TableReader& reader, std::string_view key);
// triton_interpret / pallas_interpret = "auto" | "always" | "never", or nullopt when absent.
Expected<std::optional<InterpretMode>> parse_interpret_key(const TableReader& reader, std::string_view key);

}  // namespace gpuemu::config
