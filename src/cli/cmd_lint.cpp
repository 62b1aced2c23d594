// `gpuemu lint [--kernel NAME] [--arch ARCH] [FILE...]`: PTX/SASS metrics and artifact checks of
// the config's [[kernels]], or of the given .ptx/.cu/.cubin files with default checks (docs/lint.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <filesystem>
#include <iostream>
#include <set>

#include "artifact/lint.hpp"
#include "cli/command.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;
using artifact::KernelReport;

std::string relative_to(const fs::path& p, const fs::path& root) {
  const fs::path rel = p.lexically_relative(root);
  return !rel.empty() && !rel.string().starts_with("..") ? rel.string() : p.string();
}

std::string metric_text(const KernelReport& r, const std::string& name, const std::string& label,
                        const std::string& unit = "") {
  const auto it = r.metrics.find(name);
  if (it == r.metrics.end() || !it->second.number()) return "";
  return fmt::format("{} {}{} ({})", label, *it->second.number(), unit,
                     artifact::origin_name(it->second.from));
}

void print_text(const std::vector<KernelReport>& reports, const fs::path& root) {
  std::set<std::string> printed_notes;
  int failed = 0;
  for (const KernelReport& r : reports) {
    failed += r.passed() ? 0 : 1;
    const std::string entry = r.entry == r.name ? "" : fmt::format(" [{}]", r.entry);
    std::cout << fmt::format("{} {}{}  {}:{}  {}\n", r.passed() ? "PASS" : "FAIL", r.name, entry,
                             relative_to(r.file, root), r.line, r.arch);
    std::string summary;
    for (const auto& [name, label, unit] :
         {std::tuple{"registers", "registers", ""},
          std::tuple{"virtual_registers_32bit", "virtual registers", ""},
          std::tuple{"spills", "spills", " B"}, std::tuple{"local_memory_bytes", "local", " B"},
          std::tuple{"shared_memory_bytes", "shared", " B"}, std::tuple{"instructions", "instructions", ""},
          std::tuple{"sass.instructions", "SASS instructions", ""}}) {
      const std::string part = metric_text(r, name, label, unit);
      if (!part.empty()) summary += (summary.empty() ? "" : ", ") + part;
    }
    std::cout << "  " << summary << "\n";
    for (const auto& v : r.violations) {
      std::cout << fmt::format("  {}: {}  ({}:{})\n", v.check, v.message, relative_to(v.file, root), v.line);
    }
    for (const auto& note : r.notes) {
      if (printed_notes.insert(note).second) std::cout << "  note: " << note << "\n";
    }
  }
  std::cout << fmt::format("{} kernel(s), {} failed\n", reports.size(), failed);
}

class LintCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("files", files_,
                   "PTX, CUDA C or cubin files to lint with default checks (default: [[kernels]])");
    app.add_option("--kernel", kernel_,
                   "Lint only this kernel (a [[kernels]] name, or an entry of the FILEs)");
    app.add_option("--arch", arch_,
                   "Target architecture, e.g. sm_90 (default: the kernel's arch or the PTX .target)");
  }

  Expected<ExitCode> run(Context& context) override {
    const auto tools = TRY(artifact::Toolchain::discover());
    artifact::Linter linter(tools);
    std::vector<KernelReport> reports;
    fs::path root = fs::current_path();
    const std::optional<std::string> only = kernel_.empty() ? std::nullopt : std::optional(kernel_);
    if (files_.empty()) {
      const config::Config& config = *TRY(context.config());
      root = config.root;
      reports = TRY(linter.lint_config(config, only, arch_));
    } else {
      for (const std::string& file : files_) {
        for (KernelReport& r : TRY(linter.lint_file(file, arch_, std::nullopt)))
          reports.push_back(std::move(r));
      }
      if (only) {
        std::vector<std::string> names;
        for (const auto& r : reports) names.push_back(r.entry);
        const auto entry = artifact::resolve_kernel_name(*only, names);
        if (!entry) {
          return fail(ErrorKind::usage, fmt::format("no kernel '{}' in {}; they define: {}", *only,
                                                    fmt::join(files_, ", "), fmt::join(names, ", ")));
        }
        std::erase_if(reports, [&](const KernelReport& r) { return r.entry != *entry; });
      }
    }
    bool passed = true;
    for (const auto& r : reports) passed = passed && r.passed();
    if (context.globals.format == "json") {
      nlohmann::json kernels = nlohmann::json::array();
      for (const auto& r : reports) kernels.push_back(artifact::report_to_json(r, root));
      std::cout << util::dump_json(
                       {{"kernels", std::move(kernels)}, {"passed", passed}, {"tools", tools.to_json()}})
                << "\n";
    } else if (context.globals.format == "text") {
      print_text(reports, root);
    } else {
      return fail(ErrorKind::usage,
                  fmt::format("lint prints text or json, not '{}'", context.globals.format));
    }
    return passed ? ExitCode::ok : ExitCode::check_failed;
  }

  std::vector<std::string> files_;
  std::string kernel_;
  std::string arch_;
};

}  // namespace

std::unique_ptr<Command> make_lint_command() {
  return std::make_unique<LintCommand>();
}

}  // namespace gpuemu::cli
