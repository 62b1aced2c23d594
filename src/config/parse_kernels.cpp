// [[kernels]]: compiled kernels for the artifact lint (gpuemu lint). Parsed and validated here so a
// typo fails at load time; the lint module interprets the checks.
#include <map>
#include <regex>
#include <system_error>

#include "config/key_table.hpp"
#include "config/sections.hpp"

namespace gpuemu::config {

namespace {

Expected<ArtifactChecks> parse_artifact_checks(const Diagnostics& diag, const toml::table& table) {
  ArtifactChecks checks;
  const TableReader r(diag, table, "kernels.artifact_checks", "[kernels.artifact_checks]");
  TRY(r.only_keys());
  if (auto n = TRY(r.int_at_least("max_registers", 1))) checks.max_registers = *n;
  if (auto n = TRY(r.int_at_least("max_spills", 0))) checks.max_spills = *n;
  if (auto n = TRY(r.int_at_least("max_local_memory_bytes", 0))) checks.max_local_memory_bytes = *n;
  for (auto [key, target] : {std::pair{"forbidden_instructions", &checks.forbidden_instructions},
                             std::pair{"required_instructions", &checks.required_instructions}}) {
    const auto patterns = TRY(r.strings(key));
    if (!patterns) continue;
    for (const StringItem& item : *patterns) {
      if (item.value.empty()) return diag.at(*item.node, "instruction patterns must not be empty");
      target->push_back(item.value);
    }
  }
  return checks;
}

Expected<KernelConfig> parse_kernel(const Diagnostics& diag, const toml::table& table) {
  KernelConfig kernel;
  kernel.name =
      TRY(TableReader(diag, table, "kernels", "[[kernels]]").required_string("name", "\"matmul_kernel\""))
          .value;
  const TableReader r(diag, table, "kernels", "[[kernels]] '" + kernel.name + "'");
  TRY(r.only_keys());
  kernel.location = SourceLocation{diag.file_of(table.source()), static_cast<int>(table.source().begin.line),
                                   static_cast<int>(table.source().begin.column)};

  const StringItem source = TRY(r.required_string("source", "\"kernels/" + kernel.name + ".ptx\""));
  const fs::path written(source.value);
  const fs::path base = diag.base_dir(source.node->source());
  kernel.source = (written.is_absolute() ? written : base / written).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(kernel.source, ec)) {
    return diag.at(
        *source.node,
        "kernel source not found: '" + source.value + "' (looked for " + kernel.source.string() + ")",
        "paths are relative to " + base.string() + "; give a .ptx, .cu or .cubin file");
  }
  if (auto ref = TRY(r.string_item("reference")); ref && !ref->value.empty()) {
    // A script path must name a file (a typo was accepted silently); module:function is kept as written.
    static const std::regex callable(R"(^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$)");
    const fs::path script(ref->value);
    const fs::path ref_base = diag.base_dir(ref->node->source());
    const fs::path resolved = (script.is_absolute() ? script : ref_base / script).lexically_normal();
    if (!std::regex_match(ref->value, callable) && !fs::is_regular_file(resolved, ec)) {
      return diag.at(
          *ref->node,
          "kernel reference not found: '" + ref->value + "' (looked for " + resolved.string() + ")",
          "paths are relative to " + ref_base.string() +
              "; name the reference script, or a Python callable as module:function");
    }
    kernel.reference = ref->value;
  }
  if (auto arch = TRY(r.string_item("arch"))) {
    static const std::regex arch_pattern(R"((sm|compute)_[0-9]{2,3}[af]?)");
    if (!std::regex_match(arch->value, arch_pattern)) {
      return diag.at(*arch->node, "unknown arch '" + arch->value + "'",
                     "write a CUDA architecture such as \"sm_80\", \"sm_90a\" or \"compute_75\"");
    }
    kernel.arch = arch->value;
  }
  if (const toml::table* checks = TRY(r.subtable("artifact_checks"))) {
    kernel.artifact_checks = TRY(parse_artifact_checks(diag, *checks));
  }
  return kernel;
}

}  // namespace

Expected<std::vector<KernelConfig>> parse_kernels(const Diagnostics& diag, const toml::table& root) {
  std::vector<KernelConfig> kernels;
  std::map<std::string, const toml::table*> seen;
  for (const toml::table* table : TRY(array_of_tables(diag, root, "kernels"))) {
    KernelConfig kernel = TRY(parse_kernel(diag, *table));
    if (const auto it = seen.find(kernel.name); it != seen.end()) {
      return diag.at(*table->get("name"), "duplicate kernel name '" + kernel.name + "'",
                     "kernel names must be unique; the first is at " + diag.position(it->second->source()));
    }
    seen[kernel.name] = table;
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

}  // namespace gpuemu::config
