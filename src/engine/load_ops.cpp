// check_op_loads (load_ops.hpp): groups the ops' runnables by the environment their workers
// get, runs proc::check_loads once per group, and turns failures into config diagnostics.
#include "engine/load_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "engine/op_session.hpp"
#include "proc/load_check.hpp"
#include "proc/runner.hpp"
#include "proc/runner_common.hpp"

namespace gpuemu::engine {
namespace {

std::string project_relative(const std::filesystem::path& file, const config::Config& config) {
  const auto rel = file.lexically_normal().lexically_relative(config.root);
  if (rel.empty() || rel.native().starts_with("..")) return file.generic_string();
  return rel.generic_string();
}

// The module a ModuleNotFoundError names ("No module named 'x.y'"), else empty.
std::string missing_module(const std::string& error) {
  constexpr std::string_view kPrefix = "No module named '";
  const auto start = error.find(kPrefix);
  if (start == std::string::npos) return {};
  const auto end = error.find('\'', start + kPrefix.size());
  return end == std::string::npos ? std::string{}
                                  : error.substr(start + kPrefix.size(), end - start - kPrefix.size());
}

// True when `missing` is the callable's module or one of its parent packages: the name in
// gpuemu.toml is wrong (or not on sys.path), rather than something the module itself imports.
bool names_the_runnable(const std::string& missing, const config::Runnable& runnable) {
  if (runnable.kind != config::Runnable::Kind::callable) return false;
  const std::string& module = runnable.module;
  return module == missing || (module.starts_with(missing) && module[missing.size()] == '.');
}

std::string hint_for(const std::string& error, const config::Runnable& runnable) {
  const std::string missing = missing_module(error);
  if (!missing.empty() && !names_the_runnable(missing, runnable)) {
    // The code was found, but a package it imports is not installed for this Python.
    const bool says_how = error.find("pip install") != std::string::npos;  // a framework's extra
    return fmt::format(
        "the code imports '{}', which this Python cannot import: install it{}; in the GitHub "
        "Action, list it in the file the 'requirements' input names (docs/action.md)",
        missing, says_how ? " as the message says" : "");
  }
  if (error.starts_with("ModuleNotFoundError") || error.starts_with("ImportError")) {
    return "the module is imported with the project root and [validation] python_path first on sys.path; "
           "check its dotted name, or add its folder to python_path";
  }
  if (error.starts_with("AttributeError")) return "check the function's name after the ':'";
  if (error.starts_with("TypeError")) return "name a function (or another callable object)";
  if (error.starts_with("LookupError")) {
    return "call gpuemu.script.serve(fn) at module level or define run(inputs, **kwargs), or drop "
           "persistent = true";
  }
  return "the traceback is above; the module raised while being imported";
}

struct Use {
  const config::OpConfig* op;
  const config::Runnable* runnable;
  std::string role;
};

using Groups = std::map<std::string, std::pair<proc::RunnerSettings, std::vector<Use>>>;

// Ops whose workers see the same interpreter and environment share one check.
Groups group_uses(const config::Config& config, const std::vector<const config::OpConfig*>& ops) {
  Groups groups;
  for (const auto* op : ops) {
    for (const auto& [runnable, role] :
         {std::pair{&op->op_script, "op"}, std::pair{&op->reference, "reference"}}) {
      if (runnable->empty()) continue;
      proc::RunnerSettings settings = runner_settings(config, *op, role);
      settings.autotune_pin.clear();  // the pin only picks a config at call time: every variant loads alike
      settings.sanitize = false;      // so does the sanitizer: the op and its reference load in one check
      std::string key = settings.python;
      for (const auto& [name, value] : proc::python_env(settings)) key += "\n" + name + "=" + value;
      auto& group = groups[key];
      const bool torch = settings.framework == config::Framework::pytorch ||
                         (!group.second.empty() && group.first.framework == config::Framework::pytorch);
      if (group.second.empty() || settings.timeout > group.first.timeout) group.first = settings;
      // One process imports every use's code: forked from the torch server when any use is a pytorch
      // op's (proc::check_loads), whichever use's settings the group keeps.
      if (torch) group.first.framework = config::Framework::pytorch;
      group.second.push_back({op, runnable, role});
    }
  }
  return groups;
}

// Answers of the check that expand_autotune_variants ran before the ops were selected, kept for the
// check_op_loads of the same run so the code is imported once: (group key, target) -> check. Each
// answer is used once; a new preload drops what the last one left.
std::mutex preloaded_mutex;
std::map<std::pair<std::string, std::string>, proc::LoadCheck> preloaded;

std::string target_of(const config::Runnable& r) {
  return r.kind == config::Runnable::Kind::callable ? r.module + ":" + r.function : r.script.string();
}

// The group's checks: the preloaded ones, and one run of the check for the others.
Expected<std::vector<proc::LoadCheck>> checks_of(const std::string& key, const proc::RunnerSettings& settings,
                                                 const std::vector<Use>& uses) {
  std::vector<std::optional<proc::LoadCheck>> found(uses.size());
  std::vector<config::Runnable> missing;
  {
    const std::lock_guard lock(preloaded_mutex);
    for (std::size_t i = 0; i < uses.size(); ++i) {
      const auto it = preloaded.find({key, target_of(*uses[i].runnable)});
      if (it != preloaded.end())
        found[i] = it->second;
      else
        missing.push_back(*uses[i].runnable);
    }
    for (const auto& use : uses) preloaded.erase({key, target_of(*use.runnable)});
  }
  std::vector<proc::LoadCheck> checked;
  if (!missing.empty()) checked = TRY(proc::check_loads(settings, missing));
  std::vector<proc::LoadCheck> out;
  std::size_t next = 0;
  for (auto& f : found) out.push_back(f ? std::move(*f) : std::move(checked[next++]));
  return out;
}

// The fork servers the ops' warm workers will come from start now, beside the check: their imports
// (torch and Triton for a Triton op, seconds) no longer wait for the check's own.
void start_fork_servers_ahead(const config::Config& config, const std::vector<const config::OpConfig*>& ops) {
  for (const auto* op : ops) {
    for (const auto& [runnable, role] :
         {std::pair{&op->op_script, "op"}, std::pair{&op->reference, "reference"}}) {
      if (!runnable->empty()) proc::start_fork_server_ahead(*runnable, runner_settings(config, *op, role));
    }
  }
}

}  // namespace

Expected<std::map<std::string, std::vector<proc::AutotunedKernel>>> preload_op_checks(
    const config::Config& config, const std::vector<const config::OpConfig*>& ops) {
  std::map<std::string, std::vector<proc::AutotunedKernel>> autotuned;
  std::map<std::pair<std::string, std::string>, proc::LoadCheck> answers;
  start_fork_servers_ahead(config, ops);
  for (auto& [key, group] : group_uses(config, ops)) {
    auto& [settings, uses] = group;
    std::vector<config::Runnable> runnables;
    for (const auto& use : uses) runnables.push_back(*use.runnable);
    const auto checks = TRY(proc::check_loads(settings, runnables));
    for (std::size_t i = 0; i < uses.size(); ++i) {
      answers[{key, target_of(*uses[i].runnable)}] = checks[i];
      if (uses[i].role == "op" && checks[i].ok) autotuned[uses[i].op->name] = checks[i].autotune;
    }
  }
  const std::lock_guard lock(preloaded_mutex);
  preloaded = std::move(answers);
  return autotuned;
}

Expected<std::map<std::string, std::string>> check_op_loads(const config::Config& config,
                                                            const std::vector<const config::OpConfig*>& ops) {
  std::map<std::string, std::string> inferred;
  std::vector<std::string> problems;
  start_fork_servers_ahead(config, ops);
  for (auto& [key, group] : group_uses(config, ops)) {
    auto& [settings, uses] = group;
    const auto checks = TRY(checks_of(key, settings, uses));
    for (std::size_t i = 0; i < uses.size(); ++i) {
      const Use& use = uses[i];
      const proc::LoadCheck& check = checks[i];
      if (!check.ok) {
        config::SourceLocation where = use.runnable->location;
        if (where.file.empty()) where.file = config.project_file;
        const std::string what = use.role == "reference"          ? "reference"
                                 : use.op->implementation.empty() ? "op under test"
                                                                  : "implementation";
        std::string message = fmt::format("{} '{}' of op '{}' does not load: {}", what,
                                          use.runnable->spelling, use.op->name, check.error);
        std::string diagnostic = config::diagnostic_at(where, message, hint_for(check.error, *use.runnable));
        if (std::find(problems.begin(), problems.end(), diagnostic) == problems.end()) {
          problems.push_back(std::move(diagnostic));
        }
        continue;
      }
      if (use.role != "op" || !use.op->source.empty()) continue;
      if (!check.file.empty()) {
        inferred[use.op->name] =
            project_relative(check.file, config) + (check.line > 0 ? fmt::format(":{}", check.line) : "");
      } else if (use.runnable->kind == config::Runnable::Kind::script) {
        inferred[use.op->name] = project_relative(use.runnable->script, config);
      }
    }
  }
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "\n") + p;
    return fail(ErrorKind::config, all);
  }
  return inferred;
}

}  // namespace gpuemu::engine
