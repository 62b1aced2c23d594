// load_config: read the three files, parse each with toml++, merge them (project over user over
// daemon, tables key by key, arrays whole), then hand the merged tree to the section parsers.
#include "config/loader.hpp"

#include <cstdlib>
#include <optional>

#include "config/config_json.hpp"
#include "config/diagnostic.hpp"
#include "config/key_table.hpp"
#include "config/sections.hpp"
#include "util/read_file.hpp"

namespace gpuemu::config {

namespace {

// Config files go through util's one file reader: a FIFO, a device or a huge file is refused
// before anything is read. Its error gets the diagnostic form "path: error: ...".
util::ReadOptions config_read_options(util::Symlinks symlinks) {
  return {kMaxConfigFileBytes, symlinks, ErrorKind::config};
}

std::unexpected<Error> config_read_error(const fs::path& path, const Error& error, std::string_view hint) {
  return fail(ErrorKind::config, path.string() + ": error: " + error.message + std::string(hint));
}

// Nodes are moved, never copied: toml++ keeps source regions on move only, and the regions are
// how a merged value still points at the file (and line) it came from.
void merge_into(toml::table& lower, toml::table&& higher) {
  for (auto&& [key, value] : higher) {
    toml::node* existing = lower.get(key.str());
    if (existing != nullptr && existing->is_table() && value.is_table()) {
      merge_into(*existing->as_table(), std::move(*value.as_table()));
    } else {
      // Erase first so the key, too, carries the higher file's position.
      lower.erase(key.str());
      lower.insert(toml::key(key), std::move(value));
    }
  }
}

Expected<toml::table> parse_file(Diagnostics& diag, const std::string& display, const fs::path& absolute,
                                 std::string text) {
  diag.add_file(display, absolute, text);
  try {
    return toml::parse(std::string_view(text), std::string_view(display));
  } catch (const toml::parse_error& e) {
    // toml++'s description can quote the text ("saw 'x'"): only for files named *.toml.
    if (quote_for(absolute) == Quote::none) {
      return diag.at(e.source(), "not a TOML file (a syntax error here)",
                     "a gpuemu config is a TOML file named *.toml; its text is not shown because "
                     "this one's name does not end in .toml");
    }
    return diag.at(e.source(), "TOML syntax: " + std::string(e.description()));
  }
}

Expected<Config> load(Diagnostics& diag, const fs::path& project_file, const std::string& project_text,
                      const std::vector<std::pair<fs::path, std::string>>& lower_files) {
  const fs::path project_absolute = fs::absolute(project_file).lexically_normal();
  diag.set_project_display(project_file.string());
  // Lowest precedence first: daemon, then user, then the project file on top.
  toml::table merged;
  for (const auto& [path, text] : lower_files) {
    merge_into(merged, TRY(parse_file(diag, path.string(), fs::absolute(path).lexically_normal(), text)));
  }
  merge_into(merged, TRY(parse_file(diag, project_file.string(), project_absolute, project_text)));

  Config config;
  config.project_file = project_absolute;
  config.root = project_absolute.parent_path();
  const TableReader top(diag, merged, "", "the top level");
  TRY(top.only_keys());
  config.project = TRY(parse_project(diag, merged));
  config.validation = TRY(parse_validation(diag, merged));
  config.ops = TRY(parse_ops(diag, merged, config.validation));
  // Unwritten, the seed's default "pytorch" would hand torch tensors to every numpy kernel
  // written before frameworks existed; only a written [project] framework applies to ops.
  if (config.project.framework_written) {
    const Framework project_framework = parse_framework(config.project.framework).value_or(Framework::numpy);
    for (OpConfig& op : config.ops) {
      if (!op.framework_written) op.framework = project_framework;
    }
  }
  config.kernels = TRY(parse_kernels(diag, merged));
  config.policies = TRY(parse_policies(diag, merged));
  config.ci = TRY(parse_ci(diag, merged));
  config.digest = config_digest(config);
  return config;
}

}  // namespace

ConfigSources default_sources(const fs::path& project_file) {
  ConfigSources sources;
  sources.project_file = project_file;
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    sources.user_file = fs::path(home) / ".config" / "gpuemu" / "config.toml";
  }
  const char* gpuemu_home = std::getenv("GPUEMU_HOME");
  if (gpuemu_home != nullptr && *gpuemu_home != '\0') {
    sources.daemon_file = fs::path(gpuemu_home) / "daemon.toml";
  } else if (home != nullptr && *home != '\0') {
    sources.daemon_file = fs::path(home) / ".gpuemu" / "daemon.toml";
  }
  return sources;
}

Expected<fs::path> find_project_file(const fs::path& start) {
  const fs::path first = fs::absolute(start).lexically_normal();
  std::error_code ec;
  for (fs::path dir = first; !dir.empty(); dir = dir.parent_path()) {
    const fs::path candidate = dir / "gpuemu.toml";
    if (fs::is_regular_file(candidate, ec)) return candidate;
    if (dir == dir.parent_path()) break;
  }
  return fail(ErrorKind::usage,
              "no gpuemu.toml in " + first.string() +
                  " or any directory above it\nhint: create one (see docs/configuration.md) "
                  "or pass --config FILE");
}

Expected<Config> load_config(const ConfigSources& sources) {
  auto project_text = util::read_text_file(sources.project_file, "the project file",
                                           config_read_options(sources.project_symlinks));
  if (!project_text) {
    return config_read_error(sources.project_file, project_text.error(),
                             "\nhint: pass --config FILE with the path of a gpuemu.toml");
  }
  // The user and daemon files are optional: a missing one is skipped, a wrong one is an error.
  std::vector<std::pair<fs::path, std::string>> lower;
  for (const auto& [file, role] :
       {std::pair{sources.daemon_file, "the daemon file"}, std::pair{sources.user_file, "the user file"}}) {
    if (!file) continue;
    auto text = util::read_text_file_if_present(*file, role, config_read_options(util::Symlinks::follow));
    if (!text) return config_read_error(*file, text.error(), "");
    if (*text) lower.emplace_back(*file, std::move(**text));
  }
  Diagnostics diag;
  return load(diag, sources.project_file, *project_text, lower);
}

Expected<Config> load_config_text(std::string_view text, const fs::path& pretend_path) {
  Diagnostics diag;
  return load(diag, pretend_path, std::string(text), {});
}

}  // namespace gpuemu::config
