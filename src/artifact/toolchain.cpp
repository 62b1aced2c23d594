// Finding and running the CUDA tools (toolchain.hpp). Every run has a timeout and a bounded
// output; a failing tool becomes an error that quotes the end of its stderr.
#include "artifact/toolchain.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "proc/process.hpp"
#include "util/read_file.hpp"

namespace gpuemu::artifact {
namespace {

using namespace std::chrono_literals;

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> on_path(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() && executable(fs::path(dir) / name)) return fs::path(dir) / name;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

// site-packages directories of the Python that pip installs into (GPUEMU_PYTHON or python3).
std::vector<fs::path> site_packages() {
  const char* py = std::getenv("GPUEMU_PYTHON");
  proc::ProcessSpec spec;
  spec.argv = {py && *py ? py : "python3", "-c",
               "import site\nfor p in site.getsitepackages() + [site.getusersitepackages()]: print(p)"};
  spec.timeout = 20s;
  spec.max_stdout = 1 << 16;
  std::vector<fs::path> dirs;
  auto result = proc::run_process(spec);
  if (!result || result->timed_out || result->exit_code != 0) return dirs;
  std::istringstream lines(result->stdout_data);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) dirs.emplace_back(line);
  }
  return dirs;
}

// site-packages/nvidia/cuda_nvcc/bin (CUDA 12 wheels) or site-packages/nvidia/cu13/bin (13).
std::optional<fs::path> in_wheels(const std::vector<fs::path>& dirs, std::string_view name) {
  for (const fs::path& sp : dirs) {
    std::error_code ec;
    fs::directory_iterator it(sp / "nvidia", ec), end;
    std::vector<fs::path> candidates;
    for (; !ec && it != end; it.increment(ec)) candidates.push_back(it->path() / "bin" / name);
    std::sort(candidates.begin(), candidates.end());
    for (const fs::path& c : candidates) {
      if (executable(c)) return c;
    }
  }
  return std::nullopt;
}

std::string tail_lines(std::string_view text, std::size_t max_chars = 2000) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() > max_chars) text = text.substr(text.size() - max_chars);
  return std::string(text);
}

Expected<proc::ProcessResult> run_tool(std::vector<std::string> argv, std::chrono::milliseconds timeout) {
  proc::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = timeout;
  spec.max_stdout = 256u << 20;
  spec.stderr_tail = 4u << 20;
  auto result = TRY(proc::run_process(spec));
  const std::string tool = fs::path(spec.argv[0]).filename().string();
  if (result.timed_out) {
    return fail(ErrorKind::environment, fmt::format("{} did not finish within {} s and was killed: {}", tool,
                                                    timeout.count() / 1000, fmt::join(spec.argv, " ")));
  }
  if (result.stdout_overflow)
    return fail(ErrorKind::environment, tool + " printed more than 256 MiB; giving up");
  return result;
}

std::string sm_arch(std::string_view arch) {
  return arch.starts_with("compute_") ? "sm_" + std::string(arch.substr(8)) : std::string(arch);
}

}  // namespace

Expected<Toolchain> Toolchain::discover() {
  Toolchain tools;
  std::optional<std::vector<fs::path>> wheels;
  const std::array<std::pair<const char*, std::optional<fs::path>*>, 4> slots = {
      {{"nvcc", &tools.nvcc},
       {"ptxas", &tools.ptxas},
       {"cuobjdump", &tools.cuobjdump},
       {"nvdisasm", &tools.nvdisasm}}};
  for (auto [name, slot] : slots) {
    std::string var = "GPUEMU_" + std::string(name);
    std::transform(var.begin(), var.end(), var.begin(), [](unsigned char c) { return std::toupper(c); });
    if (const char* env = std::getenv(var.c_str()); env && *env) {
      if (std::string_view(env) == "none") continue;
      if (!executable(env)) {
        return fail(ErrorKind::environment,
                    fmt::format("{}={} is not an executable file: point it at {} or set it to "
                                "\"none\" to lint without it",
                                var, env, name));
      }
      *slot = fs::path(env);
      continue;
    }
    if ((*slot = on_path(name))) continue;
    for (const char* home :
         std::array<const char*, 3>{std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"), "/usr/local/cuda"}) {
      if (home && *home && executable(fs::path(home) / "bin" / name)) {
        *slot = fs::path(home) / "bin" / name;
        break;
      }
    }
    if (*slot) continue;
    if (!wheels) wheels = site_packages();
    *slot = in_wheels(*wheels, name);
  }
  return tools;
}

nlohmann::json Toolchain::to_json() const {
  nlohmann::json out;
  for (auto [name, slot] : {std::pair{"nvcc", &nvcc}, std::pair{"ptxas", &ptxas},
                            std::pair{"cuobjdump", &cuobjdump}, std::pair{"nvdisasm", &nvdisasm}}) {
    out[name] = *slot ? nlohmann::json((*slot)->string()) : nlohmann::json(nullptr);
  }
  return out;
}

std::string install_hint(std::string_view tool) {
  const std::string_view wheel = tool == "cuobjdump"  ? "nvidia-cuda-cuobjdump"
                                 : tool == "nvdisasm" ? "nvidia-cuda-nvdisasm"
                                                      : "nvidia-cuda-nvcc";
  std::string var(tool);
  std::transform(var.begin(), var.end(), var.begin(), [](unsigned char c) { return std::toupper(c); });
  return fmt::format("install it with 'python3 -m pip install {}' or set GPUEMU_{} to its path", wheel, var);
}

std::optional<std::string> missing_tool_for(const Toolchain& tools, const fs::path& source) {
  if (source.extension() != ".cu" || tools.nvcc) return std::nullopt;
  return fmt::format(
      "compiling CUDA C ({}) needs nvcc, which was not found; {}, or point the kernel's source "
      "at PTX generated elsewhere (nvcc -ptx)",
      source.filename().string(), install_hint("nvcc"));
}

Expected<std::string> compile_cu(const Toolchain& tools, const fs::path& cu, std::string_view arch) {
  if (!tools.nvcc) {
    return fail(
        ErrorKind::environment,
        fmt::format("cannot lint {}: compiling CUDA C needs nvcc, which was not found; {}, or generate the "
                    "PTX elsewhere (nvcc -ptx -arch={}) and point the kernel's source at the .ptx",
                    cu.string(), install_hint("nvcc"), arch));
  }
  auto dir = TRY(TempDir::create());
  const fs::path out = dir.path() / (cu.stem().string() + ".ptx");
  auto result = TRY(run_tool({tools.nvcc->string(), "-ptx", "-arch=" + std::string(arch), "-lineinfo",
                              cu.string(), "-o", out.string()},
                             300s));
  if (result.exit_code != 0) {
    return fail(ErrorKind::config, fmt::format("nvcc could not compile {} for {} (exit {}):\n{}", cu.string(),
                                               arch, result.exit_code, tail_lines(result.stderr_tail)));
  }
  auto text = util::read_text_file(out, "the PTX nvcc wrote", {.kind = ErrorKind::environment});
  if (!text) return fail(ErrorKind::environment, "nvcc reported success, but " + text.error().message);
  return text;
}

Expected<std::string> assemble_ptx(const Toolchain& tools, const fs::path& ptx, std::string_view arch,
                                   const fs::path& cubin) {
  if (!tools.ptxas) return fail(ErrorKind::environment, "ptxas not found; " + install_hint("ptxas"));
  const std::string sm = sm_arch(arch);
  auto result =
      TRY(run_tool({tools.ptxas->string(), "-v", "-arch=" + sm, ptx.string(), "-o", cubin.string()}, 120s));
  if (result.exit_code != 0) {
    return fail(
        ErrorKind::config,
        fmt::format("ptxas could not assemble {} for {} (exit {}); check the kernel's arch against the "
                    "PTX .target:\n{}",
                    ptx.string(), sm, result.exit_code, tail_lines(result.stderr_tail)));
  }
  return result.stdout_data + result.stderr_tail;
}

Expected<std::string> disassemble(const Toolchain& tools, const fs::path& cubin) {
  std::vector<std::string> argv;
  if (tools.cuobjdump)
    argv = {tools.cuobjdump->string(), "-res-usage", "-sass", cubin.string()};
  else if (tools.nvdisasm)
    argv = {tools.nvdisasm->string(), "-c", cubin.string()};
  else
    return fail(ErrorKind::environment,
                "neither cuobjdump nor nvdisasm was found; " + install_hint("cuobjdump"));
  auto result = TRY(run_tool(argv, 120s));
  if (result.exit_code != 0) {
    return fail(ErrorKind::config, fmt::format("{} could not read {} (exit {}); is it a cubin?\n{}",
                                               fs::path(argv[0]).filename().string(), cubin.string(),
                                               result.exit_code, tail_lines(result.stderr_tail)));
  }
  return result.stdout_data;
}

Expected<TempDir> TempDir::create() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "gpuemu-lint-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    return fail(ErrorKind::io, fmt::format("cannot create a temporary directory under {}: {}", base.string(),
                                           std::strerror(errno)));
  }
  return TempDir(fs::path(pattern));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace gpuemu::artifact
