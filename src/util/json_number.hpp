// Numbers in gpuemu's JSON (result.json, baselines, the store's JSON columns, the daemon IPC): a
// finite double is a JSON number, a non-finite one the string "NaN", "Infinity" or "-Infinity".
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

namespace gpuemu::util {

// The JSON form of `value`: a number, or "NaN", "Infinity", "-Infinity".
nlohmann::json json_number(double value);

// `value` read back: a JSON number, or one of the three strings; nullopt for anything else.
std::optional<double> read_json_number(const nlohmann::json& value);

}  // namespace gpuemu::util
