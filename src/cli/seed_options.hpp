// Seeds on the command line: the master seed of a test, fuzz, ci or calibrate run, and the case
// seed that reproduce and minimize take as SEED or --seed. Parsing itself is parse_seed's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/command.hpp"

namespace gpuemu::cli {

// --seed `text` when given, else engine::resolve_master_seed's default ([validation] seed, else
// random).
Expected<std::uint64_t> master_seed(const std::string& text, const config::Config& config);

// The case seed of reproduce and minimize, given as the positional SEED or as --seed.
class CaseSeedOption {
 public:
  // `help` describes the positional seed; --seed is "Same as the positional seed".
  void add_to(CLI::App& app, const std::string& help);
  // The parsed seed; `missing` is the usage error when neither form was given.
  Expected<std::uint64_t> value(std::string_view missing) const;

 private:
  std::string positional_;
  std::string option_;
};

}  // namespace gpuemu::cli
