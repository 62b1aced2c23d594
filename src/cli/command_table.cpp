// The subcommands, one row each (STYLE item 10). Add a command by writing cli/cmd_NAME.cpp
// with a factory and adding its declaration and row here.
#include "cli/command.hpp"

#include <array>

namespace gpuemu::cli {

std::unique_ptr<Command> make_test_command();
std::unique_ptr<Command> make_fuzz_command();
std::unique_ptr<Command> make_reproduce_command();
std::unique_ptr<Command> make_version_command();

namespace {

const std::array kCommands = {
    CommandRow{"test", "Run every op at each of its dtypes on a small fixed set of cases", &make_test_command},
    CommandRow{"fuzz", "Run seeded, operator-aware random cases against each op", &make_fuzz_command},
    CommandRow{"reproduce", "Re-run one case from its seed and show the verdict and worst elements",
               &make_reproduce_command},
    CommandRow{"version", "Print the gpuemu version", &make_version_command},
};

}  // namespace

std::span<const CommandRow> command_table() { return kCommands; }

}  // namespace gpuemu::cli
