// Seeds on the command line (see seed_options.hpp): one home for "--seed, else the config's
// default" and for "SEED or --seed", which several commands share.
#include "cli/seed_options.hpp"

#include <optional>

#include "engine/plans.hpp"

namespace gpuemu::cli {

Expected<std::uint64_t> master_seed(const std::string& text, const config::Config& config) {
  std::optional<std::uint64_t> seed;
  if (!text.empty()) seed = TRY(parse_seed(text, "--seed"));
  return engine::resolve_master_seed(seed, config);
}

void CaseSeedOption::add_to(CLI::App& app, const std::string& help) {
  app.add_option("seed", positional_, help);
  app.add_option("--seed", option_, "Same as the positional seed");
}

Expected<std::uint64_t> CaseSeedOption::value(std::string_view missing) const {
  const std::string& text = !positional_.empty() ? positional_ : option_;
  if (text.empty()) return fail(ErrorKind::usage, std::string(missing));
  return parse_seed(text, "seed");
}

}  // namespace gpuemu::cli
