// Store access for commands (see store_access.hpp): the default database and replay resolution
// with the command's logging and --no-store.
#include "cli/store_access.hpp"

#include <fmt/format.h>

namespace gpuemu::cli {

Expected<store::Store> open_store() {
  const auto path = TRY(store::default_db_path());
  return store::Store::open(path);
}

Expected<ResolvedCase> resolve_case(Context& context, std::uint64_t seed, const std::string& op_name) {
  const config::Config& config = *TRY(context.config());
  std::optional<store::Store> store;
  if (!context.globals.no_store) {
    auto opened = open_store();
    if (opened) {
      store = std::move(*opened);
    } else if (op_name.empty()) {
      return std::unexpected(opened.error());
    } else {
      context.log("gpuemu: warning: " + opened.error().message + "; regenerating the case from its seed");
    }
  }
  return store::resolve_case(config, store ? &*store : nullptr, seed, op_name,
                             [&](const std::string& line) { context.log("gpuemu: " + line); });
}

}  // namespace gpuemu::cli
