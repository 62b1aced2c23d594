// What ran each op and where its time went (result.json "runtime" and "timing"), as the short
// phrases the text summary and the Markdown job summary both print.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result/run_result.hpp"

namespace gpuemu::report {

// "pytorch 2.5.1 on cpu, Triton: interpreter (not a GPU run)"; "" when nothing was reported.
std::string runtime_phrase(const nlohmann::json& runtime);

// "12.3 s = op 10.2 s (83%) + reference 0.3 s (2%) + gpuemu 1.8 s (15%)"; "" without timing.
std::string timing_phrase(const std::optional<result::Timing>& timing);

// "1.23 s", "45 ms": seconds for people.
std::string format_duration(double seconds);

}  // namespace gpuemu::report
