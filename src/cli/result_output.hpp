// Writes a result document to stdout in the format asked for with --format.
// Formats beyond text and json come from the report writers' table.
#pragma once

#include "cli/command.hpp"
#include "report/writer.hpp"
#include "result/document.hpp"

namespace gpuemu::cli {

Expected<void> write_result(Context& context, const result::ResultDocument& result);

// Where reports put repo-relative paths: $GITHUB_WORKSPACE, else the project root (the directory of
// gpuemu.toml), else the working directory. `ci run` and `report render` share it, so an offline
// render of result.json reproduces the files `ci run` wrote byte for byte.
report::RenderOptions render_options(Context& context);

}  // namespace gpuemu::cli
