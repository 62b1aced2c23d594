// Store access for commands (see store_access.hpp): the default database and replay resolution
// with the command's logging and --no-store.
#include "cli/store_access.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "engine/load_ops.hpp"

namespace gpuemu::cli {

Expected<store::Store> open_store() {
  const auto path = TRY(store::default_db_path());
  return store::Store::open(path);
}

Expected<std::optional<store::Store>> open_existing_store() {
  const auto path = TRY(store::default_db_path());
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<store::Store>();
  return std::optional<store::Store>(TRY(store::Store::open(path)));
}

namespace {

Expected<std::optional<store::Store>> open_any_store() {
  return std::optional<store::Store>(TRY(open_store()));
}

}  // namespace

Expected<ResolvedCase> resolve_case(Context& context, std::uint64_t seed, const std::string& op_name) {
  const config::Config& config = *TRY(context.config());
  // Read even under --no-store, which only stops runs from being recorded.
  auto opened = context.globals.no_store ? open_existing_store() : open_any_store();
  std::optional<store::Store> store;
  if (opened) {
    store = std::move(*opened);
  } else if (op_name.empty()) {
    return std::unexpected(opened.error());
  } else {
    context.log("gpuemu: warning: " + opened.error().message + "; regenerating the case from its seed");
  }
  return engine::resolve_case(config, store ? &*store : nullptr, seed, op_name,
                              [&](const std::string& line) { context.log("gpuemu: " + line); });
}

Expected<ResolvedCase> resolve_loadable_case(Context& context, std::uint64_t seed,
                                             const std::string& op_name) {
  auto resolved = TRY(resolve_case(context, seed, op_name));
  TRY(engine::check_op_loads(*TRY(context.config()), {resolved.op}));
  return resolved;
}

}  // namespace gpuemu::cli
