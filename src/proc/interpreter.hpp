// The interpreter gpuemu starts for workers and scripts, with a launcher shim (pyenv, asdf, mise, a
// wrapper script) resolved once per run instead of once per process (docs/configuration.md "python").
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "proc/runner.hpp"

namespace gpuemu::proc {

struct ResolvedInterpreter {
  std::string program;  // what to start: the real interpreter, or `python` as written
  // What the launcher changed in the environment it gave the interpreter (pyenv puts the version's
  // bin folder first on PATH): set for every process started with `program`, as the launcher would.
  std::vector<std::pair<std::string, std::string>> env;
};

// `python` (the config's `python` or GPUEMU_PYTHON) as the processes of a project in `cwd` should
// start it. An interpreter binary (its real file named python* or pypy*, a venv's symlink among
// them) is used as written: nothing is started. Anything else on the way (a `#!` script, a binary
// launcher) is asked once, in `cwd`, so that the launcher reads the project's .python-version,
// which interpreter it runs (`sys.executable`) and with which environment. Cached per process and
// keyed on the launcher, `cwd`, PYENV_VERSION / ASDF_PYTHON_VERSION / MISE_PYTHON_VERSION and the
// nearest .python-version and .tool-versions above `cwd`, so a daemon sees a version change. A
// launcher that cannot answer leaves `python` as written: its processes then fail as they would
// have, with their own message. GPUEMU_RESOLVE_PYTHON=0 turns this off.
ResolvedInterpreter resolve_interpreter(const std::string& python, const std::filesystem::path& cwd);

// `settings` with its python resolved for its cwd and the launcher's variables in interpreter_env:
// what make_runner and the load check start when the process is not a fork of the fork server
// (which the launcher starts once itself); not runner_settings, so runners a test fakes never do.
RunnerSettings with_resolved_interpreter(RunnerSettings settings);

}  // namespace gpuemu::proc
