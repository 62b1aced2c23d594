// What ran each op and where its time went (result.json "runtime" and "timing"), as the short
// phrases the text summary and the Markdown job summary both print.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuemu::report {

// "pytorch 2.5.1 on cpu, Triton: interpreter (not a GPU run)"; "" when nothing was reported.
std::string runtime_phrase(const nlohmann::json& runtime);

// "12.3 s = op 10.2 s (83%) + reference 0.3 s (2%) + gpuemu 1.8 s (15%)"; "" without timing.
std::string timing_phrase(const nlohmann::json& timing);

// "1.23 s", "45 ms": seconds for people.
std::string format_duration(double seconds);

// Sums two "timing" objects (sharded runs); the share is recomputed.
nlohmann::json add_timing(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace gpuemu::report
