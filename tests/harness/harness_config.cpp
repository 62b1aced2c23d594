// libFuzzer harness for the gpuemu.toml loader (config/loader.hpp): any text either loads or is
// a config error; a config that loads also serialises to canonical JSON with a stable digest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/config_json.hpp"
#include "config/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // As if it were examples/gpuemu.toml, so the example project's script paths resolve and the
  // loader goes on past [[ops]] (a missing script ends the load). Files are checked, never read.
  auto config = gpuemu::config::load_config_text(text, GPUEMU_HARNESS_PROJECT_FILE);
  if (!config) {
    if (config.error().message.empty()) std::abort();  // every error says what went wrong
    return 0;
  }
  const std::string dumped = gpuemu::config::to_json(*config).dump();
  if (gpuemu::config::config_digest(*config) != config->digest) std::abort();  // digest is deterministic
  (void)dumped;
  return 0;
}
