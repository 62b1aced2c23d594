// The gpuemu binary: everything lives in the core libraries; main only hands over to the CLI.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return gpuemu::cli::run(argc, argv); }
