// resolve_interpreter (interpreter.hpp): asks a launcher shim once which interpreter it runs for a
// project, so that workers, the load check and cold scripts start that interpreter directly.
#include "proc/interpreter.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string_view>

#include "proc/process.hpp"
#include "proc/spawn.hpp"

namespace gpuemu::proc {
namespace {

namespace fs = std::filesystem;

// Prints the interpreter the launcher started and the environment it gave it.
constexpr const char* kProbe =
    "import json, os, sys; sys.stdout.write(json.dumps({'executable': sys.executable, 'env': "
    "dict(os.environ)}))";

// Variables a shell script changes for itself on the way, which no interpreter choice depends on.
constexpr std::array<std::string_view, 4> kShellOwn = {"_", "SHLVL", "PWD", "OLDPWD"};

bool resolution_wanted() {
  const char* value = std::getenv("GPUEMU_RESOLVE_PYTHON");
  return !(value && std::string_view(value) == "0");
}

std::string read_head(const fs::path& file, std::size_t bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// An interpreter itself rather than something that picks one: a binary (not a `#!` script) whose
// real file, after symlinks (a venv's python is one), is named python* or pypy*.
bool is_interpreter_binary(const fs::path& program) {
  std::error_code ec;
  const fs::path real = fs::canonical(program, ec);
  if (ec) return false;
  const std::string name = real.filename().string();
  if (!name.starts_with("python") && !name.starts_with("pypy")) return false;
  return !read_head(real, 2).starts_with("#!");
}

// What decides a launcher's choice besides its own file: the version variables and the nearest
// version files above the project, by path and contents.
std::string choice_inputs(const fs::path& cwd) {
  std::string key;
  for (const char* name : {"PYENV_VERSION", "ASDF_PYTHON_VERSION", "MISE_PYTHON_VERSION"}) {
    const char* value = std::getenv(name);
    key += std::string(name) + "=" + (value ? value : "") + "\n";
  }
  std::error_code ec;
  fs::path dir = fs::absolute(cwd, ec).lexically_normal();
  for (const char* file : {".python-version", ".tool-versions"}) {
    for (fs::path at = dir;; at = at.parent_path()) {
      const fs::path candidate = at / file;
      if (fs::is_regular_file(candidate, ec)) {
        key += candidate.string() + "\n" + read_head(candidate, 4096) + "\n";
        break;
      }
      if (at == at.parent_path()) break;
    }
  }
  return key;
}

ResolvedInterpreter ask_launcher(const std::string& python, const fs::path& cwd) {
  ResolvedInterpreter as_written{python, {}};
  ProcessSpec spec;
  spec.argv = {python, "-S", "-c", kProbe};  // -S: no site packages to import, half the start-up
  spec.cwd = cwd;
  spec.timeout = std::chrono::milliseconds(60000);
  const auto result = run_process(spec);
  if (!result || result->timed_out || result->signaled || result->exit_code != 0) return as_written;
  const auto answer = nlohmann::json::parse(result->stdout_data, nullptr, false);
  if (!answer.is_object() || !answer.contains("executable") || !answer["executable"].is_string() ||
      !answer.contains("env") || !answer["env"].is_object()) {
    return as_written;
  }
  const std::string executable = answer["executable"].get<std::string>();
  if (executable.empty() || executable.front() != '/' || !find_program(executable) ||
      !is_interpreter_binary(executable)) {
    return as_written;
  }
  ResolvedInterpreter resolved{executable, {}};
  for (const auto& [name, value] : answer["env"].items()) {
    if (!value.is_string() || std::ranges::find(kShellOwn, name) != kShellOwn.end()) continue;
    const char* ours = std::getenv(name.c_str());
    if (ours == nullptr || value.get<std::string>() != ours)
      resolved.env.emplace_back(name, value.get<std::string>());
  }
  return resolved;
}

}  // namespace

ResolvedInterpreter resolve_interpreter(const std::string& python, const fs::path& cwd) {
  ResolvedInterpreter as_written{python, {}};
  if (!resolution_wanted()) return as_written;
  const auto found = find_program(python);
  if (!found || is_interpreter_binary(*found)) return as_written;

  static std::mutex mutex;
  static std::map<std::string, ResolvedInterpreter> known;
  std::string key = found->string() + "\n" + cwd.string() + "\n" + choice_inputs(cwd);
  if (const char* path = std::getenv("PATH")) key += std::string("PATH=") + path;
  const std::lock_guard lock(mutex);  // one probe per key, even with several job threads asking
  auto it = known.find(key);
  if (it == known.end()) it = known.emplace(key, ask_launcher(python, cwd)).first;
  return it->second;
}

RunnerSettings with_resolved_interpreter(RunnerSettings settings) {
  ResolvedInterpreter resolved = resolve_interpreter(settings.python, settings.cwd);
  settings.python = std::move(resolved.program);
  settings.interpreter_env = std::move(resolved.env);
  return settings;
}

}  // namespace gpuemu::proc
