// Context for commands (see command.hpp): lazy config loading, stderr logging, seed parsing.
// The config is loaded at most once per process so every command sees the same digest.
#include <unistd.h>

#include <fmt/format.h>
#include <filesystem>
#include <iostream>

#include "cli/command.hpp"
#include "config/loader.hpp"
#include "engine/autotune_variants.hpp"
#include "util/seed.hpp"

namespace gpuemu::cli {

Expected<const config::Config*> Context::config() {
  if (!config_) {
    std::filesystem::path file = globals.config_path;
    if (file.empty()) {
      file = TRY(config::find_project_file(std::filesystem::current_path()));
    } else if (!std::filesystem::exists(file)) {
      return fail(ErrorKind::usage,
                  fmt::format("config file '{}' does not exist; pass the path of a gpuemu.toml "
                              "to --config",
                              file.string()));
    }
    config_ = TRY(config::load_config(config::default_sources(std::filesystem::absolute(file))));
  }
  return &*config_;
}

Expected<void> Context::expand_autotune(const std::vector<std::string>& names) {
  TRY(config());
  return engine::expand_autotune_variants(*config_, names);
}

void Context::log(std::string_view line) const {
  std::cerr << line << '\n';
}

bool Context::show_progress() const {
  return !globals.quiet;
}

Expected<std::uint64_t> parse_seed(std::string_view text, std::string_view what) {
  const auto value = util::parse_seed(text);
  if (!value) {
    return fail(ErrorKind::usage,
                fmt::format("{} '{}' is not a seed: give an unsigned 64-bit decimal number ({})", what, text,
                            util::kSeedRange));
  }
  return *value;
}

}  // namespace gpuemu::cli
