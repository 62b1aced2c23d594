// A check for counts given on the command line (--cases, --iterations): a whole number within a
// range, refused with the range and what to give instead of CLI11's bare "Value X not in range".
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace gpuemu::cli {

// Accepts decimal whole numbers from `low` to `high`; CLI11 prefixes the option's name.
CLI::Validator count_in_range(std::int64_t low, std::int64_t high);

}  // namespace gpuemu::cli
