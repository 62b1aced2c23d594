// Writes a result document to stdout in the format asked for with --format.
// Formats beyond text and json come from the report writers' table.
#pragma once

#include <nlohmann/json.hpp>

#include "cli/command.hpp"

namespace gpuemu::cli {

Expected<void> write_result(Context& context, const nlohmann::json& result);

}  // namespace gpuemu::cli
