// Measuring one kernel and applying its artifact checks (lint.hpp): merges PTX, ptxas and SASS
// metrics (the best source wins and says so) and turns each failed check into a Violation.
#include "artifact/lint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "artifact/pattern.hpp"
#include "util/suggest.hpp"

namespace gpuemu::artifact {
namespace {

void set(Metrics& m, const std::string& name, std::optional<std::int64_t> value, Origin from,
         std::string note = "") {
  if (value) m[name] = Metric{*value, from, std::move(note)};
}

void add_ptxas_metrics(Metrics& m, const PtxasFunctionInfo& info) {
  set(m, "registers", info.registers, Origin::ptxas);
  set(m, "stack_frame_bytes", info.stack_frame, Origin::ptxas);
  set(m, "spill_stores_bytes", info.spill_stores, Origin::ptxas);
  set(m, "spill_loads_bytes", info.spill_loads, Origin::ptxas);
  if (info.spill_stores || info.spill_loads) {
    set(m, "spills", info.spill_stores.value_or(0) + info.spill_loads.value_or(0), Origin::ptxas,
        "spill store bytes plus spill load bytes");
  }
  if (info.stack_frame || info.lmem) {
    set(m, "local_memory_bytes", info.stack_frame.value_or(0) + info.lmem.value_or(0), Origin::ptxas,
        "stack frame (local arrays and spills)");
  }
  set(m, "shared_memory_bytes", info.shared.value_or(0), Origin::ptxas, "static shared memory");
  set(m, "constant_memory_bytes", info.constant, Origin::ptxas, "all constant banks, kernel params included");
  set(m, "named_barriers", info.barriers, Origin::ptxas);
}

void add_sass_metrics(Metrics& m, const SassFunction& fn) {
  m["sass.instructions"] = Metric{static_cast<std::int64_t>(fn.opcodes.size()), Origin::sass, ""};
  for (const std::string& opcode : fn.opcodes) {
    auto [it, inserted] =
        m.try_emplace("sass." + opcode_tokens(opcode).front(), Metric{std::int64_t{0}, Origin::sass, ""});
    std::get<std::int64_t>(it->second.value) += 1;
  }
  // Resource usage fills what ptxas did not tell (a cubin source has no ptxas report).
  if (!m.contains("registers")) set(m, "registers", fn.registers, Origin::sass);
  if (!m.contains("stack_frame_bytes")) set(m, "stack_frame_bytes", fn.stack, Origin::sass);
  const bool from_ptx = !m.contains("local_memory_bytes") || m["local_memory_bytes"].from == Origin::ptx;
  if (from_ptx && (fn.stack || fn.local)) {
    set(m, "local_memory_bytes", fn.stack.value_or(0) + fn.local.value_or(0), Origin::sass,
        "STACK + LOCAL of the cubin");
  }
  if (fn.shared && (!m.contains("shared_memory_bytes") || m["shared_memory_bytes"].from == Origin::ptx)) {
    set(m, "shared_memory_bytes", fn.shared, Origin::sass);
  }
  if (!m.contains("constant_memory_bytes")) set(m, "constant_memory_bytes", fn.constant, Origin::sass);
}

struct Location {
  fs::path file;
  int line = 0;
};

// The CUDA source line of a PTX instruction through .loc/.file when that file exists, else the PTX line.
Location locate(const Artifact& a, const PtxInstruction& ins) {
  if (ins.loc_file > 0 && a.ptx) {
    if (auto it = a.ptx->files.find(ins.loc_file); it != a.ptx->files.end()) {
      const fs::path written(it->second);
      std::error_code ec;
      for (const fs::path& candidate : {written, a.source.parent_path() / written.filename()}) {
        if (fs::is_regular_file(candidate, ec)) return {candidate, ins.loc_line};
      }
    }
  }
  if (a.source.extension() == ".cu") return {a.source, ins.loc_line};
  return {a.source, ins.line};
}

struct Matches {
  std::int64_t count = 0;
  std::optional<Location> first;
  std::string first_opcode;
};

Matches find_matches(const Artifact& a, const std::vector<const PtxFunction*>& closure,
                     const SassFunction* sass, const OpcodePattern& pattern) {
  Matches m;
  if (pattern.target == OpcodePattern::Target::ptx) {
    for (const PtxFunction* fn : closure) {
      for (const PtxInstruction& ins : fn->instructions) {
        if (!pattern_matches(pattern, ins.opcode)) continue;
        if (m.count++ == 0) {
          m.first = locate(a, ins);
          m.first_opcode = ins.opcode;
        }
      }
    }
  } else if (sass) {
    for (const std::string& opcode : sass->opcodes) {
      if (pattern_matches(pattern, opcode) && m.count++ == 0) m.first_opcode = opcode;
    }
  }
  return m;
}

void check_limit(KernelReport& r, const std::string& check, const std::string& metric, std::int64_t limit,
                 const std::string& advice) {
  const auto it = r.metrics.find(metric);
  const auto value = it == r.metrics.end() ? std::nullopt : it->second.number();
  if (!value || *value <= limit) return;
  r.violations.push_back(Violation{check,
                                   fmt::format("{} is {} ({}), above {} = {}; {}", metric, *value,
                                               origin_name(it->second.from), check, limit, advice),
                                   limit, value, std::string(origin_name(it->second.from)), r.file, r.line});
}

}  // namespace

Expected<KernelReport> evaluate(const Artifact& a, const std::string& entry,
                                const config::ArtifactChecks& checks) {
  KernelReport r;
  r.name = r.entry = entry;
  r.source = a.source;
  r.arch = a.arch;
  r.notes = a.notes;
  r.file = a.source;
  std::vector<const PtxFunction*> closure;
  if (a.ptx) {
    const PtxFunction* fn = a.ptx->find(entry);
    if (!fn)
      return fail(ErrorKind::config, fmt::format("{} defines no kernel '{}'", a.source.string(), entry));
    closure = call_closure(*a.ptx, *fn);
    r.metrics = ptx_metrics(*a.ptx, *fn);
    r.line = fn->line;
    if (a.source.extension() == ".cu") {
      r.line = 0;
      for (const PtxInstruction& ins : fn->instructions) {
        if (ins.loc_line > 0) {
          const Location at = locate(a, ins);
          r.file = at.file;
          r.line = at.line;
          break;
        }
      }
    }
  }
  if (auto it = a.ptxas.find(entry); it != a.ptxas.end()) add_ptxas_metrics(r.metrics, it->second);
  const SassFunction* sass = nullptr;
  if (auto it = a.sass.find(entry); it != a.sass.end()) {
    sass = &it->second;
    add_sass_metrics(r.metrics, *sass);
  }

  // max_registers: real registers when known, else the PTX virtual-register estimate.
  if (r.metrics.contains("registers")) {
    check_limit(r, "max_registers", "registers", checks.max_registers,
                "reduce live values, or bound them with __launch_bounds__ / -maxrregcount");
  } else if (r.metrics.contains("virtual_registers_32bit")) {
    r.notes.push_back(
        "max_registers checked against the PTX virtual-register count, an upper-bound estimate: the "
        "real count needs ptxas");
    check_limit(
        r, "max_registers", "virtual_registers_32bit", checks.max_registers,
        "this counts declared PTX virtual registers (an upper bound); run with ptxas for the real count: " +
            install_hint("ptxas"));
  }
  if (r.metrics.contains("spills")) {
    check_limit(
        r, "max_spills", "spills", checks.max_spills,
        "the kernel spills registers to local memory; reduce register pressure or relax the launch bound");
  } else if (a.has_ptxas) {
    r.metrics["spills"] = Metric{std::int64_t{0}, Origin::ptxas, "spill store bytes plus spill load bytes"};
  } else {
    r.notes.push_back(
        fmt::format("max_spills = {} not checked: spills are known only from ptxas", checks.max_spills));
  }
  check_limit(r, "max_local_memory_bytes", "local_memory_bytes", checks.max_local_memory_bytes,
              "a per-thread array indexed at run time, or spills, live in slow local memory");

  for (const auto& [check, patterns, forbidden] :
       {std::tuple{"forbidden_instructions", &checks.forbidden_instructions, true},
        std::tuple{"required_instructions", &checks.required_instructions, false}}) {
    for (const std::string& text : *patterns) {
      const OpcodePattern pattern = TRY(parse_pattern(text));
      const bool is_ptx = pattern.target == OpcodePattern::Target::ptx;
      if ((is_ptx && !a.ptx) || (!is_ptx && !sass)) {
        r.notes.push_back(
            fmt::format("{} pattern '{}' not checked: no {} for this kernel{}", check, text,
                        is_ptx ? "PTX (the source is a cubin)" : "SASS",
                        is_ptx ? "" : "; " + install_hint(a.has_ptxas ? "cuobjdump" : "ptxas")));
        continue;
      }
      const Matches m = find_matches(a, closure, sass, pattern);
      const Location at = m.first.value_or(Location{r.file, r.line});
      if (forbidden && m.count > 0) {
        r.violations.push_back(
            Violation{check,
                      fmt::format("forbidden instruction '{}' matched {} time(s), first '{}'", text, m.count,
                                  m.first_opcode),
                      0, m.count, is_ptx ? "ptx" : "sass", at.file, at.line});
      } else if (!forbidden && m.count == 0) {
        r.violations.push_back(
            Violation{check,
                      fmt::format("required instruction '{}' does not occur in the {} of '{}'", text,
                                  is_ptx ? "PTX" : "SASS", entry),
                      1, 0, is_ptx ? "ptx" : "sass", r.file, r.line});
      }
    }
  }
  return r;
}

Expected<KernelReport> Linter::lint_kernel(const config::KernelConfig& kernel) {
  for (const auto* list :
       {&kernel.artifact_checks.forbidden_instructions, &kernel.artifact_checks.required_instructions}) {
    for (const std::string& text : *list) {
      if (auto p = parse_pattern(text); !p) {
        return fail(ErrorKind::config, fmt::format("{}:{}: kernel '{}': {}", kernel.location.file.string(),
                                                   kernel.location.line, kernel.name, p.error().message));
      }
    }
  }
  const Artifact* a = TRY(artifact(kernel.source, kernel.arch));
  const auto names = a->kernels();
  const auto entry = resolve_kernel_name(kernel.name, names);
  if (!entry) {
    return fail(ErrorKind::config,
                fmt::format("{}:{}: kernel '{}' is not defined in {}{}; it defines: {}",
                            kernel.location.file.string(), kernel.location.line, kernel.name,
                            kernel.source.string(), util::did_you_mean_suffix(kernel.name, names),
                            names.empty() ? "(no kernels)" : fmt::format("{}", fmt::join(names, ", "))));
  }
  KernelReport r = TRY(evaluate(*a, *entry, kernel.artifact_checks));
  r.name = kernel.name;
  return r;
}

Expected<std::vector<KernelReport>> Linter::lint_file(const fs::path& file, std::string arch,
                                                      const std::optional<std::string>& only,
                                                      const config::ArtifactChecks& checks) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return fail(ErrorKind::usage,
                fmt::format("{} is not a file: give .ptx, .cu or .cubin files to lint", file.string()));
  }
  const Artifact* a = TRY(artifact(fs::absolute(file), arch));
  std::vector<std::string> names = a->kernels();
  if (only) {
    const auto entry = resolve_kernel_name(*only, names);
    if (!entry) {
      return fail(ErrorKind::usage, fmt::format("{} defines no kernel '{}'{}", file.string(), *only,
                                                util::did_you_mean_suffix(*only, names)));
    }
    names = {*entry};
  }
  std::vector<KernelReport> reports;
  for (const std::string& name : names) reports.push_back(TRY(evaluate(*a, name, checks)));
  return reports;
}

Expected<std::vector<KernelReport>> Linter::lint_config(const config::Config& config,
                                                        const std::optional<std::string>& only,
                                                        const std::string& arch) {
  if (config.kernels.empty()) {
    return fail(ErrorKind::usage,
                fmt::format("nothing to lint: {} declares no [[kernels]]; add one (see docs/lint.md) "
                            "or pass .ptx/.cu/.cubin files: gpuemu lint FILE...",
                            config.project_file.string()));
  }
  std::vector<std::string> names;
  for (const auto& k : config.kernels) names.push_back(k.name);
  if (only && std::find(names.begin(), names.end(), *only) == names.end()) {
    return fail(ErrorKind::usage, fmt::format("unknown kernel '{}'{} in {}; its [[kernels]] are: {}", *only,
                                              util::did_you_mean_suffix(*only, names),
                                              config.project_file.string(), fmt::join(names, ", ")));
  }
  std::vector<KernelReport> reports;
  for (config::KernelConfig kernel : config.kernels) {
    if (only && kernel.name != *only) continue;
    if (!arch.empty()) kernel.arch = arch;
    reports.push_back(TRY(lint_kernel(kernel)));
  }
  return reports;
}

nlohmann::json report_to_json(const KernelReport& r, const fs::path& root) {
  const auto rel = [&](const fs::path& p) {
    if (p.empty()) return std::string();
    const fs::path relative = p.lexically_relative(root);
    return !relative.empty() && !relative.string().starts_with("..") ? relative.string() : p.string();
  };
  nlohmann::json violations = nlohmann::json::array();
  for (const Violation& v : r.violations) {
    nlohmann::json j{{"check", v.check},
                     {"message", v.message},
                     {"from", v.from},
                     {"file", rel(v.file)},
                     {"line", v.line}};
    j["limit"] = v.limit ? nlohmann::json(*v.limit) : nlohmann::json(nullptr);
    j["actual"] = v.actual ? nlohmann::json(*v.actual) : nlohmann::json(nullptr);
    violations.push_back(std::move(j));
  }
  return {{"name", r.name},
          {"entry", r.entry},
          {"source", rel(r.source)},
          {"arch", r.arch},
          {"file", rel(r.file)},
          {"line", r.line},
          {"metrics", metrics_to_json(r.metrics)},
          {"violations", std::move(violations)},
          {"notes", r.notes},
          {"passed", r.passed()}};
}

}  // namespace gpuemu::artifact
