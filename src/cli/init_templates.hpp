// The starter projects of `gpuemu init` (docs/commands.md, "init"): per template, a commented
// gpuemu.toml, a float64 reference, a correct op stub and the CI workflow, as file texts.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuemu::cli {

struct InitFile {
  std::string path;  // relative to the project directory, '/'-separated
  std::string text;
};

struct InitTemplate {
  std::string_view name;  // "elementwise", "row-reduction", "matmul", "attention"
  std::string_view op;    // the op it declares, e.g. "silu"
  std::string_view help;  // one line for --help and docs
};

std::span<const InitTemplate> init_templates();

// Every file of `tmpl` for a project named `project`.
std::vector<InitFile> init_files(const InitTemplate& tmpl, std::string_view project);

}  // namespace gpuemu::cli
