// Metrics of one PTX entry (metrics.hpp): registers, params, memory declarations, instruction mix
// by opcode and state space, branches, loops, barriers and calls, over the entry and its callees.
#include <algorithm>
#include <set>

#include "artifact/metrics.hpp"
#include "artifact/pattern.hpp"

namespace gpuemu::artifact {

std::string_view origin_name(Origin origin) {
  switch (origin) {
    case Origin::ptx:
      return "ptx";
    case Origin::ptxas:
      return "ptxas";
    case Origin::sass:
      return "sass";
  }
  return "ptx";
}

std::optional<std::int64_t> Metric::number() const {
  if (const auto* n = std::get_if<std::int64_t>(&value)) return *n;
  return std::nullopt;
}

nlohmann::json metrics_to_json(const Metrics& metrics) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, m] : metrics) {
    nlohmann::json entry;
    std::visit([&](const auto& v) { entry["value"] = v; }, m.value);
    entry["from"] = origin_name(m.from);
    if (!m.note.empty()) entry["note"] = m.note;
    out[name] = std::move(entry);
  }
  return out;
}

std::map<std::string, std::int64_t> numeric_metrics(const nlohmann::json& metrics_json) {
  std::map<std::string, std::int64_t> out;
  if (!metrics_json.is_object()) return out;
  for (const auto& [name, entry] : metrics_json.items()) {
    const nlohmann::json* value = entry.is_object() && entry.contains("value") ? &entry["value"] : &entry;
    if (value->is_number_integer()) out[name] = value->get<std::int64_t>();
  }
  return out;
}

std::vector<const PtxFunction*> call_closure(const PtxModule& module, const PtxFunction& entry) {
  std::vector<const PtxFunction*> out{&entry};
  std::set<std::string> seen{entry.name};
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (const std::string& callee : out[i]->callees) {
      if (!seen.insert(callee).second) continue;
      if (const PtxFunction* f = module.find(callee)) out.push_back(f);
    }
  }
  return out;
}

namespace {

const std::set<std::string_view> kStateSpaces = {"global", "shared", "local", "param", "const", "tex"};

// "ld.global.nc.f32" -> "global"; "ld.shared::cta.u32" -> "shared"; "ld.f32" -> "generic".
std::string state_space(const std::vector<std::string>& tokens) {
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string base = tokens[i].substr(0, tokens[i].find("::"));
    if (kStateSpaces.contains(base)) return base;
  }
  return "generic";
}

std::int64_t param_bytes(const std::vector<PtxParam>& params) {
  std::int64_t offset = 0;
  for (const PtxParam& p : params) {
    const std::int64_t align = std::max<std::int64_t>(1, p.align > 0 ? p.align : ptx_type_bytes(p.type));
    offset = (offset + align - 1) / align * align + p.bytes;
  }
  return offset;
}

constexpr std::int64_t kSaturated = std::int64_t{1} << 60;

struct Counter {
  Metrics& m;
  void add(const std::string& name, std::int64_t n = 1) {
    auto [it, inserted] = m.try_emplace(name, Metric{std::int64_t{0}, Origin::ptx, ""});
    auto& value = std::get<std::int64_t>(it->second.value);
    value = n > kSaturated - value ? kSaturated : value + n;  // garbage input must not overflow
  }
  void zero(const std::string& name) { add(name, 0); }
};

void count_instructions(const PtxFunction& fn, Counter& c) {
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    const PtxInstruction& ins = fn.instructions[i];
    const auto tokens = opcode_tokens(ins.opcode);
    const std::string& base = tokens.front();
    c.add("instructions");
    c.add("opcode." + base);
    if (base == "ld" || base == "st" || base == "ldu" || base == "atom" || base == "red") {
      c.add(base + "." + state_space(tokens));
    }
    if (base == "mad" || base == "fma" || base == "mad24") c.add("fma");
    if (base == "mma" || base == "wmma" || base == "wgmma" || base.starts_with("tcgen05"))
      c.add("tensor_core");
    if (base == "cvt" || base == "cvta") c.add(base == "cvt" ? "conversions" : "address_conversions");
    if (base == "setp" || base == "set") c.add("compares");
    if (base == "atom" || base == "red") c.add("atomics");
    if (base == "tex" || base == "tld4" || base == "txq" || base.starts_with("su")) c.add("texture");
    if (base == "call") c.add("calls");
    if ((base == "bar" && !(tokens.size() > 1 && tokens[1] == "warp")) || base == "barrier")
      c.add("barriers");
    if (base == "bra" || base == "brx") {
      c.add("branches");
      if (ins.guarded) c.add("conditional_branches");
      std::string target = ins.operands.substr(0, ins.operands.find_first_of(" ,;"));
      if (auto it = fn.labels.find(target); it != fn.labels.end() && it->second <= i)
        c.add("backward_branches");
    }
  }
}

}  // namespace

Metrics ptx_metrics(const PtxModule& module, const PtxFunction& entry) {
  Metrics m;
  Counter c{m};
  if (!module.version.empty()) m["ptx_version"] = Metric{module.version, Origin::ptx, ""};
  if (!module.target.empty()) m["ptx_target"] = Metric{module.target, Origin::ptx, ""};
  m["params"] = Metric{static_cast<std::int64_t>(entry.params.size()), Origin::ptx, ""};
  m["param_bytes"] = Metric{param_bytes(entry.params), Origin::ptx, "with natural alignment padding"};
  for (const auto& [key, value] : entry.performance)
    m[key] = Metric{value, Origin::ptx, "performance directive"};

  for (std::string_view name :
       {"instructions", "fma", "tensor_core", "conversions", "compares", "atomics", "texture", "calls",
        "barriers", "branches", "conditional_branches", "backward_branches", "ld.local", "st.local",
        "ld.global", "st.global", "ld.shared", "st.shared"}) {
    c.zero(std::string(name));
  }
  c.zero("virtual_registers");
  c.zero("virtual_registers_32bit");
  c.zero("local_memory_bytes");
  c.zero("shared_memory_bytes");
  c.zero("dynamic_shared_memory");

  std::set<std::string> symbols;
  const auto closure = call_closure(module, entry);
  for (const PtxFunction* fn : closure) {
    count_instructions(*fn, c);
    for (const auto& [cls, n] : fn->registers) {
      c.add("virtual_registers." + cls, n);
      c.add("virtual_registers", n);
    }
    c.add("virtual_registers_32bit", fn->registers_32bit);
    for (const PtxVariable& v : fn->variables) {
      if (v.space == "local") c.add("local_memory_bytes", v.bytes);
      if (v.space == "shared")
        c.add(v.is_extern ? "dynamic_shared_memory" : "shared_memory_bytes", v.is_extern ? 1 : v.bytes);
    }
    symbols.insert(fn->symbols.begin(), fn->symbols.end());
  }
  for (const PtxVariable& v : module.variables) {  // module-scope variables the kernel refers to
    if (!symbols.contains(v.name)) continue;
    if (v.space == "local") c.add("local_memory_bytes", v.bytes);
    if (v.space == "shared")
      c.add(v.is_extern ? "dynamic_shared_memory" : "shared_memory_bytes", v.is_extern ? 1 : v.bytes);
    if (v.space == "const") c.add("constant_memory_bytes", v.bytes);
  }
  m["virtual_registers"].note = "declared PTX virtual registers (all classes), entry plus callees";
  m["virtual_registers_32bit"].note =
      "declared virtual registers in 32-bit units (pred 0, 64-bit 2): an upper-bound estimate of real "
      "registers";
  m["local_memory_bytes"].note = "declared .local bytes; spills are known only after ptxas";
  m["shared_memory_bytes"].note = "static .shared bytes the kernel refers to";
  m["functions_called"] = Metric{static_cast<std::int64_t>(closure.size() - 1), Origin::ptx, ""};
  return m;
}

}  // namespace gpuemu::artifact
