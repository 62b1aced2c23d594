// Kernel metrics: named values that each say where they came from (the PTX text, ptxas -v, or
// the SASS of the cubin). The names and their meaning are listed in docs/lint.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "artifact/ptx.hpp"

namespace gpuemu::artifact {

// Where a metric came from. The names are written to JSON and the store: never rename them.
enum class Origin { ptx, ptxas, sass };
std::string_view origin_name(Origin origin);

struct Metric {
  std::variant<std::int64_t, std::string> value;
  Origin from = Origin::ptx;
  std::string note;  // e.g. "declared .local bytes; spills are known only after ptxas"

  std::optional<std::int64_t> number() const;
};

using Metrics = std::map<std::string, Metric>;

// {"registers": {"value": 34, "from": "ptxas"}, ...}; "note" only when set.
nlohmann::json metrics_to_json(const Metrics& metrics);
// Numeric values only: {"registers": 34, ...}, the form stored for baselines and diffs.
std::map<std::string, std::int64_t> numeric_metrics(const nlohmann::json& metrics_json);

// The functions a kernel runs: the entry and every function it calls, transitively, in the file.
std::vector<const PtxFunction*> call_closure(const PtxModule& module, const PtxFunction& entry);

// Metrics of one entry from its PTX alone (its own body plus the functions it calls).
Metrics ptx_metrics(const PtxModule& module, const PtxFunction& entry);

}  // namespace gpuemu::artifact
