// Building a kernel's artifacts (lint.hpp): read or compile the PTX, assemble it with ptxas -v,
// disassemble the cubin; every missing tool becomes a note saying what it would have added.
#include <fmt/format.h>

#include <fstream>

#include "artifact/lint.hpp"
#include "util/read_file.hpp"

namespace gpuemu::artifact {
namespace {

enum class SourceKind { ptx, cu, cubin };

Expected<SourceKind> source_kind(const fs::path& source) {
  const std::string ext = source.extension().string();
  if (ext == ".ptx") return SourceKind::ptx;
  if (ext == ".cu") return SourceKind::cu;
  if (ext == ".cubin") return SourceKind::cubin;
  return fail(ErrorKind::config,
              fmt::format("kernel source {} is neither .ptx, .cu nor .cubin: give the PTX (nvcc "
                          "-ptx), the CUDA C source or a cubin",
                          source.string()));
}

Expected<std::string> read_text(const fs::path& file) {
  return util::read_text_file(file, "kernel source", {.kind = ErrorKind::config});
}

// "sm_80, debug" -> "sm_80"; anything but an sm_ arch -> "".
std::string target_arch(std::string_view target) {
  const std::string first(target.substr(0, target.find_first_of(", ")));
  return first.starts_with("sm_") ? first : std::string();
}

}  // namespace

std::vector<std::string> Artifact::kernels() const {
  std::vector<std::string> names;
  if (ptx) {
    for (const PtxFunction* f : ptx->entries()) names.push_back(f->name);
  } else {
    for (const auto& [name, fn] : sass) names.push_back(name);
  }
  return names;
}

Expected<Artifact> build_artifact(const Toolchain& tools, const fs::path& source, std::string arch) {
  Artifact a;
  a.source = source;
  const SourceKind kind = TRY(source_kind(source));
  auto dir = TRY(TempDir::create());
  fs::path cubin = source;
  if (kind != SourceKind::cubin) {
    std::string text;
    fs::path ptx_file = source;
    if (kind == SourceKind::cu) {
      text = TRY(compile_cu(tools, source, arch.empty() ? "sm_80" : arch));
      ptx_file = dir.path() / (source.stem().string() + ".ptx");
      std::ofstream(ptx_file, std::ios::binary) << text;
    } else {
      text = TRY(read_text(source));
    }
    auto module = parse_ptx(text, source.string() + (kind == SourceKind::cu ? " (PTX from nvcc)" : ""));
    if (!module) return fail(ErrorKind::config, module.error().message);
    a.ptx = std::move(*module);
    if (arch.empty()) arch = target_arch(a.ptx->target);
    if (arch.empty()) arch = "sm_80";
    if (tools.ptxas) {
      cubin = dir.path() / "kernel.cubin";
      a.ptxas = parse_ptxas_info(TRY(assemble_ptx(tools, ptx_file, arch, cubin)));
      a.has_ptxas = true;
    } else {
      a.notes.push_back("ptxas not found, so registers, spills and the stack frame are unknown; " +
                        install_hint("ptxas"));
    }
  } else if (arch.empty()) {
    arch = "(cubin)";
  }
  a.arch = arch;
  if (kind == SourceKind::cubin || a.has_ptxas) {
    if (tools.cuobjdump || tools.nvdisasm) {
      a.sass = parse_sass(TRY(disassemble(tools, cubin)));
      a.has_sass = true;
    } else {
      a.notes.push_back(
          "neither cuobjdump nor nvdisasm found, so SASS metrics and patterns are unavailable; " +
          install_hint("cuobjdump"));
    }
  }
  if (kind == SourceKind::cubin && a.sass.empty()) {
    return fail(ErrorKind::config,
                fmt::format("{} holds no SASS functions this tool could read; is it a cubin for "
                            "an sm_ arch?",
                            source.string()));
  }
  return a;
}

Expected<const Artifact*> Linter::artifact(const fs::path& source, const std::string& arch) {
  const auto key = std::pair{source, arch};
  if (auto it = cache_.find(key); it != cache_.end()) return &it->second;
  Artifact built = TRY(build_artifact(tools_, source, arch));
  return &cache_.emplace(key, std::move(built)).first->second;
}

std::optional<std::string> resolve_kernel_name(std::string_view name, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (n == name) return n;
  }
  // Itanium mangling: _Z<len><name>... or _ZN<len><ns>...<len><name>E...
  std::vector<std::string> found;
  for (const auto& n : names) {
    std::string_view rest = n;
    if (!rest.starts_with("_Z")) continue;
    rest.remove_prefix(2);
    const bool nested = rest.starts_with('N');
    if (nested) rest.remove_prefix(1);
    std::string qualified, last;
    while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) {
      std::size_t len = 0, i = 0;
      while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])) && len < 100000) {
        len = len * 10 + static_cast<std::size_t>(rest[i++] - '0');
      }
      if (len == 0 || i + len > rest.size()) break;
      last = std::string(rest.substr(i, len));
      qualified += (qualified.empty() ? "" : "::") + last;
      rest.remove_prefix(i + len);
      if (!nested) break;
    }
    if (!last.empty() && (name == qualified || name == last)) found.push_back(n);
  }
  if (found.size() == 1) return found.front();
  return std::nullopt;
}

}  // namespace gpuemu::artifact
