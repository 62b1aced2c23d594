// The CLI entry point (see cli.hpp): builds the CLI11 app from the command table, suggests
// near names for unknown commands and flags, and turns every failure into a message and exit code.
#include "cli/cli.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/command.hpp"
#include "report/writer.hpp"
#include "util/suggest.hpp"

namespace gpuemu::cli {
namespace {

constexpr int kUsage = static_cast<int>(ExitCode::usage_or_config);

void add_global_options(CLI::App& app, GlobalOptions& globals) {
  app.add_option("--config", globals.config_path, "gpuemu.toml to use (default: the nearest one upward)");
  // Checked against the report formats as it is parsed, so a typo is refused before a command runs
  // (a whole test run used to end in "unknown report format").
  const CLI::Validator known_format(
      [](const std::string& format) -> std::string {
        if (format == "html") return {};  // a signed report's rendering (attest::RenderFormat)
        auto row = report::find_writer(format);
        if (row) return {};
        std::vector<std::string> names{"html"};
        for (const auto& writer : report::writers()) names.emplace_back(writer.format);
        return row.error().message + ", and html for a signed report" +
               util::did_you_mean_suffix(format, names);
      },
      "FORMAT");
  app.add_option("--format", globals.format, "Output format on stdout: text or json (and more per command)")
      ->check(known_format);
  app.add_flag("-v,--verbose", globals.verbose, "More detail on stderr");
  app.add_flag("-q,--quiet", globals.quiet, "No progress on stderr");
  app.add_flag("--no-store", globals.no_store,
               "Do not record this run in the store ($GPUEMU_HOME/db/gpuemu.db)");
  app.add_flag("--daemon", globals.daemon,
               "Run test, fuzz and reproduce through the running daemon (gpuemu daemon start)");
}

std::vector<std::string> top_level_names() {
  std::vector<std::string> names;
  for (const auto& row : command_table()) {
    std::string first(row.path.substr(0, row.path.find(' ')));
    if (std::find(names.begin(), names.end(), first) == names.end()) names.push_back(first);
  }
  return names;
}

// The words of a group's commands ("run", "publish" of "ci run", "ci publish").
std::vector<std::string> commands_of(std::string_view group) {
  std::vector<std::string> names;
  for (const auto& row : command_table()) {
    if (row.path.starts_with(group) && row.path.size() > group.size() && row.path[group.size()] == ' ')
      names.emplace_back(row.path.substr(group.size() + 1));
  }
  return names;
}

// An unknown command as typed ("fuzzz", "ci rn"), the commands it could have meant ("ci run",
// ...) and the group it was typed in ("ci ", or "" at the top): the first word that is not an
// option or an option's value, and the word after a group's name.
struct UnknownCommand {
  std::string typed;
  std::vector<std::string> near;
  std::string group;
};

std::optional<UnknownCommand> unknown_command(int argc, char** argv) {
  const auto names = top_level_names();
  std::string group;
  std::vector<std::string> subcommands;  // the group's, once its name is read
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--config" || arg == "--format") {
      ++i;
      continue;
    }
    if (arg.starts_with("-")) continue;
    if (group.empty()) {
      if (std::find(names.begin(), names.end(), arg) == names.end())
        return UnknownCommand{std::string(arg), names, ""};
      group = std::string(arg);
      subcommands = commands_of(group);
      if (subcommands.empty()) return std::nullopt;  // a command, not a group
      continue;
    }
    if (std::find(subcommands.begin(), subcommands.end(), arg) != subcommands.end()) return std::nullopt;
    for (auto& name : subcommands) name = group + " " + name;
    return UnknownCommand{group + " " + std::string(arg), std::move(subcommands), group + " "};
  }
  return std::nullopt;
}

std::string unexpected_flag_hint(const CLI::App* app, const std::string& message) {
  // CLI11 says "The following arguments were not expected: relu --opp", listing an option's value
  // before the option itself; suggest the near flag for the first word that is a flag.
  const auto pos = message.find(": ");
  if (pos == std::string::npos || !app) return "";
  // The command's own flags, then those of the commands above it (--format, --config, ...).
  std::vector<std::string> flags;
  for (const CLI::App* at = app; at; at = at->get_parent()) {
    for (const auto* opt : at->get_options()) {
      for (const auto& name : opt->get_lnames()) flags.push_back("--" + name);
    }
  }
  std::istringstream words(message.substr(pos + 2));
  for (std::string word; words >> word;) {
    // A flag the command has is not a typo (CLI11 names it in "Could not convert: --limit = many").
    if (!word.starts_with("-") || std::find(flags.begin(), flags.end(), word) != flags.end()) continue;
    if (std::string hint = util::did_you_mean_suffix(word, flags); !hint.empty()) return hint;
  }
  return "";
}

// "report render " for the `render` subcommand of `report`: the words a user types before --help.
std::string command_path(const CLI::App* sub) {
  std::string path;
  for (; sub && sub->get_parent(); sub = sub->get_parent()) path = sub->get_name() + " " + path;
  return path;
}

int run_parsed(int argc, char** argv) {
  GlobalOptions globals;
  CLI::App app{"gpuemu: a GPU-less correctness gate for deep-learning kernels", "gpuemu"};
  app.require_subcommand(1);
  add_global_options(app, globals);

  std::map<std::string, CLI::App*> groups;
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  for (const auto& row : command_table()) {
    CLI::App* parent = &app;
    std::string_view path = row.path;
    if (auto space = path.find(' '); space != std::string_view::npos) {
      std::string group(path.substr(0, space));
      auto& g = groups[group];
      if (!g) {
        g = app.add_subcommand(group, "Commands of '" + group + "' (see gpuemu " + group + " --help)");
        g->require_subcommand(1);
        g->fallthrough();
      }
      parent = g;
      path = path.substr(space + 1);
    }
    CLI::App* sub = parent->add_subcommand(std::string(path), std::string(row.help));
    sub->fallthrough();
    auto command = row.make();
    command->add_options(*sub);
    commands.emplace_back(sub, std::move(command));
  }

  if (auto unknown = unknown_command(argc, argv)) {
    std::cerr << "gpuemu: unknown command '" << unknown->typed << "'"
              << util::did_you_mean_suffix(unknown->typed, unknown->near) << "; run 'gpuemu "
              << unknown->group << "--help' for the list\n";
    return kUsage;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* target = &app;
    for (auto* s = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front(); s;
         s = s->get_subcommands().empty() ? nullptr : s->get_subcommands().front()) {
      target = s;
    }
    std::cout << target->help();
    return 0;
  } catch (const CLI::ParseError& e) {
    const CLI::App* deepest = nullptr;
    for (const auto& [sub, command] : commands) {
      if (sub->parsed()) deepest = sub;
    }
    for (const auto& [name, group] : groups) {
      if (!deepest && group->parsed() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        // A group's name alone ("gpuemu ci"): which commands it has, rather than CLI11's words.
        std::string names;
        for (const auto& command : commands_of(name)) names += (names.empty() ? "" : ", ") + command;
        std::cerr << "gpuemu: '" << name << "' needs one of its commands: " << names << "\nRun 'gpuemu "
                  << name << " --help' for usage.\n";
        return kUsage;
      }
    }
    std::cerr << "gpuemu: " << e.what() << unexpected_flag_hint(deepest ? deepest : &app, e.what())
              << "\nRun 'gpuemu " << command_path(deepest) << "--help' for usage.\n";
    return kUsage;
  }

  Context context(globals);
  for (auto& [sub, command] : commands) {
    if (!sub->parsed()) continue;
    auto code = command->run(context);
    if (!code) {
      // Config diagnostics already read "path:line:col: error: ..."; others get the prefix.
      const bool located = code.error().kind == ErrorKind::config &&
                           code.error().message.find(": error: ") != std::string::npos;
      std::cerr << (located ? "" : "gpuemu: error: ") << code.error().message << "\n";
      return static_cast<int>(exit_code(code.error().kind));
    }
    return static_cast<int>(*code);
  }
  std::cerr << "gpuemu: no command given; run 'gpuemu --help'\n";
  return kUsage;
}

}  // namespace

int run(int argc, char** argv) {
  // Children that exit early close their pipes; a write must then fail with EPIPE, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run_parsed(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gpuemu: internal error: " << e.what()
              << "\nThis is a bug in gpuemu; please report it with the command line above.\n";
  } catch (...) {
    std::cerr
        << "gpuemu: internal error (unknown exception); please report it with the command line above.\n";
  }
  return static_cast<int>(ExitCode::environment);
}

}  // namespace gpuemu::cli
