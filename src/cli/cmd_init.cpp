// `gpuemu init [DIR] --template NAME`: writes a starter project (cli/init_templates.hpp) that
// `gpuemu ci run` passes as written, and never overwrites a file unless --force says so.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <system_error>

#include "cli/command.hpp"
#include "cli/init_templates.hpp"
#include "util/atomic_file.hpp"
#include "util/suggest.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;

// The directory's name as a TOML-safe project name.
std::string project_name(const fs::path& dir) {
  std::string name = fs::absolute(dir).lexically_normal().filename().string();
  if (name.empty()) name = "gpuemu-project";
  for (char& c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '-' || c == '_' || c == '.')) c = '-';
  }
  return name;
}

class InitCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("dir", dir_, "Project directory (default: the current directory; created if missing)");
    std::string names;
    for (const auto& t : init_templates()) names += (names.empty() ? "" : ", ") + std::string(t.name);
    app.add_option("--template,-t", template_, "Starter op: " + names + " (default elementwise)");
    app.add_flag("--force", force_, "Overwrite files that already exist");
  }

  Expected<ExitCode> run(Context& context) override {
    const InitTemplate* chosen = nullptr;
    std::vector<std::string> names;
    for (const auto& t : init_templates()) {
      names.emplace_back(t.name);
      if (t.name == template_) chosen = &t;
    }
    if (chosen == nullptr) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return fail(ErrorKind::usage, fmt::format("unknown template '{}'{}; templates: {}", template_,
                                                util::did_you_mean_suffix(template_, names), all));
    }
    const fs::path dir = dir_.empty() ? fs::path(".") : fs::path(dir_);
    const auto files = init_files(*chosen, project_name(dir));

    // Check every file first, so a refusal writes nothing.
    std::vector<std::string> existing;
    std::error_code ec;
    for (const auto& f : files) {
      if (fs::exists(dir / f.path, ec)) existing.push_back((dir / f.path).lexically_normal().string());
    }
    if (!existing.empty() && !force_) {
      std::string list;
      for (const auto& e : existing) list += "\n  " + e;
      return fail(ErrorKind::usage,
                  fmt::format("gpuemu init would overwrite {} existing file{}:{}\nhint: move them away, "
                              "init another directory (gpuemu init DIR), or pass --force to overwrite them",
                              existing.size(), existing.size() == 1 ? "" : "s", list));
    }
    for (const auto& f : files) TRY(util::write_file_atomically(dir / f.path, f.text));

    if (context.globals.format == "json") {
      nlohmann::json written = nlohmann::json::array();
      for (const auto& f : files) written.push_back(f.path);
      std::cout
          << nlohmann::json{{"template", chosen->name}, {"dir", dir.string()}, {"files", written}}.dump()
          << "\n";
      return ExitCode::ok;
    }
    const bool vowel = std::string_view("aeiou").find(chosen->name.front()) != std::string_view::npos;
    std::cout << fmt::format("gpuemu init: {} {} project ({}) in {}\n", vowel ? "an" : "a", chosen->name,
                             chosen->help, dir.string());
    for (const auto& f : files) {
      const bool replaced = std::find(existing.begin(), existing.end(),
                                      (dir / f.path).lexically_normal().string()) != existing.end();
      std::cout << "  " << f.path << (replaced ? " (overwritten)" : "") << "\n";
    }
    std::cout << fmt::format(
        "next: cd {} && gpuemu ci run   (or: pytest tests; then add a second implementation of '{}' in "
        "gpuemu.toml)\n",
        dir.string(), chosen->op);
    return ExitCode::ok;
  }

  std::string dir_;
  std::string template_ = "elementwise";
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> make_init_command() {
  return std::make_unique<InitCommand>();
}

}  // namespace gpuemu::cli
