// The command-line interface: parses global options and dispatches to the command table.
// Fatal errors are caught here, once, and turned into a message and an exit code.
#pragma once

namespace gpuemu::cli {

int run(int argc, char** argv);

}  // namespace gpuemu::cli
