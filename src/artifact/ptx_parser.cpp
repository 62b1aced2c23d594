// PTX statements into the model of ptx.hpp: module directives, variables, and per .entry/.func
// the params, registers, variables, labels, instructions (with their .loc) and callees.
#include <fmt/format.h>
#include <cctype>
#include <charconv>

#include "artifact/ptx.hpp"

namespace gpuemu::artifact {
namespace {

constexpr std::size_t kMaxDeclared = 1u << 24;  // cap on one declaration's count (garbage guard)

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j > i) words.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

// A count or index: a whole non-negative decimal number.
std::optional<std::int64_t> to_count(std::string_view s) {
  const auto v = parse_int(s);
  return v && *v >= 0 ? v : std::nullopt;
}

// "name[16][4]" -> ("name", 64); "name[]" -> ("name", 0); "name" -> ("name", 1).
std::pair<std::string, std::int64_t> name_and_count(std::string_view word) {
  const std::size_t bracket = word.find('[');
  if (bracket == std::string_view::npos) return {std::string(word), 1};
  std::int64_t count = 1;
  std::string_view rest = word.substr(bracket);
  while (rest.starts_with('[')) {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) break;
    const auto n = to_count(rest.substr(1, close - 1));
    count = (n && *n < static_cast<std::int64_t>(kMaxDeclared)) ? count * *n : 0;
    if (count > static_cast<std::int64_t>(kMaxDeclared) * 64) count = 0;
    rest = rest.substr(close + 1);
  }
  return {std::string(word.substr(0, bracket)), count};
}

// ".param .align 8 .b8 name[16]", ".reg .u64 .ptr .global name", ".shared .align 4 .b8 a[1024]".
struct Declaration {
  std::vector<std::string> qualifiers;  // without dots: "param", "align", "b8", "v4", ...
  std::string type;
  std::int64_t vector = 1;
  std::int64_t align = 0;
  std::string name;
  std::int64_t count = 1;
  bool has_initializer = false;
};

Declaration parse_declaration(std::string_view text) {
  Declaration d;
  if (auto eq = text.find('='); eq != std::string_view::npos) {
    d.has_initializer = true;
    text = text.substr(0, eq);
  }
  const auto words = split_words(text);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.starts_with('.')) {
      std::string q = w.substr(1);
      if (q == "align" && i + 1 < words.size())
        d.align = to_count(words[++i]).value_or(0);
      else if (q == "v2" || q == "v4" || q == "v8")
        d.vector = q[1] - '0';
      else if (ptx_type_bytes(q) > 0 || q == "pred")
        d.type = q;
      d.qualifiers.push_back(std::move(q));
    } else if (d.name.empty()) {
      auto [name, count] = name_and_count(w);
      d.name = std::move(name);
      d.count = count;
    }
  }
  return d;
}

std::int64_t declared_bytes(const Declaration& d) {
  return ptx_type_bytes(d.type) * d.vector * d.count;
}

// Registers: ".reg .f32 %f<5>" (5 registers), ".reg .b32 %r1, %r2", ".reg .v4 .f32 %v".
void add_registers(PtxFunction& fn, std::string_view text) {
  const std::size_t comma_free = text.find(',');
  Declaration d = parse_declaration(text.substr(0, comma_free));
  std::int64_t count = 0;
  const auto words = split_words(text);
  for (const std::string& w : words) {
    if (w.starts_with('.')) continue;
    std::string_view name = w;
    if (name.ends_with(',')) name.remove_suffix(1);
    if (name.empty()) continue;
    if (auto lt = name.find('<'); lt != std::string_view::npos && name.ends_with('>')) {
      count += std::min<std::int64_t>(to_count(name.substr(lt + 1, name.size() - lt - 2)).value_or(0),
                                      kMaxDeclared);
    } else {
      ++count;
    }
  }
  count *= d.vector;
  const std::string cls = d.type.empty() ? "unknown" : d.type;
  // Saturate: a fuzzed file may declare billions of registers in many statements.
  constexpr std::int64_t kCap = std::int64_t{1} << 50;
  fn.registers[cls] = std::min(kCap, fn.registers[cls] + count);
  const std::int64_t bytes = ptx_type_bytes(d.type);
  const std::int64_t units = d.type == "pred" ? 0 : count * std::max<std::int64_t>(1, (bytes + 3) / 4);
  fn.registers_32bit = std::min(kCap, fn.registers_32bit + units);
}

std::optional<PtxVariable> variable_of(std::string_view text, int line) {
  const Declaration d = parse_declaration(text);
  for (std::string_view space : {"local", "shared", "const", "global"}) {
    if (std::find(d.qualifiers.begin(), d.qualifiers.end(), space) != d.qualifiers.end()) {
      const bool is_extern =
          std::find(d.qualifiers.begin(), d.qualifiers.end(), "extern") != d.qualifiers.end();
      return PtxVariable{d.name, std::string(space), declared_bytes(d), is_extern, line};
    }
  }
  return std::nullopt;
}

// The text between the '(' at `open` and its matching ')'; `end` is set past the ')'.
std::optional<std::string_view> parenthesised(std::string_view text, std::size_t open, std::size_t& end) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) {
      end = i + 1;
      return text.substr(open + 1, i - open - 1);
    }
  }
  return std::nullopt;
}

std::vector<PtxParam> parse_params(std::string_view list) {
  std::vector<PtxParam> params;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] != ',') continue;
    const Declaration d = parse_declaration(list.substr(start, i - start));
    start = i + 1;
    if (d.name.empty() && d.type.empty()) continue;
    params.push_back(PtxParam{d.name, d.type, declared_bytes(d), d.align});
  }
  return params;
}

Expected<PtxFunction> parse_header(std::string_view text, int line, std::string_view file) {
  PtxFunction fn;
  fn.line = line;
  const auto bad = [&](std::string_view what) {
    return fail(ErrorKind::parse, fmt::format("{}:{}: {} in '{}'", file, line, what, text.substr(0, 80)));
  };
  std::size_t kw = text.find(".entry");
  fn.is_entry = kw != std::string_view::npos;
  if (!fn.is_entry) kw = text.find(".func");
  if (kw == std::string_view::npos) return bad("expected .entry or .func");
  fn.visible = text.substr(0, kw).find(".visible") != std::string_view::npos;
  std::size_t i = kw + (fn.is_entry ? 6 : 5);
  const auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip();
  if (!fn.is_entry && i < text.size() && text[i] == '(') {
    auto returns = parenthesised(text, i, i);
    if (!returns) return bad("unclosed '(' of the return parameters");
    fn.returns = parse_params(*returns);
    skip();
  }
  const std::size_t name_start = i;
  while (i < text.size() && is_ptx_ident_char(text[i])) ++i;
  fn.name = std::string(text.substr(name_start, i - name_start));
  if (fn.name.empty()) return bad("missing function name");
  skip();
  if (i < text.size() && text[i] == '(') {
    auto params = parenthesised(text, i, i);
    if (!params) return bad("unclosed '(' of the parameter list");
    fn.params = parse_params(*params);
  }
  const auto words = split_words(text.substr(std::min(i, text.size())));
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (!words[w].starts_with('.')) continue;
    const std::string key = words[w].substr(words[w].find_first_not_of('.') == std::string::npos
                                                ? words[w].size()
                                                : words[w].find_first_not_of('.'));
    std::string value;
    while (w + 1 < words.size() && !words[w + 1].starts_with('.')) value += words[++w];
    if (!key.empty()) fn.performance[key] = value;
  }
  return fn;
}

void collect_symbols(PtxFunction& fn, std::string_view operands) {
  std::size_t i = 0;
  while (i < operands.size()) {
    if (std::isalpha(static_cast<unsigned char>(operands[i])) || operands[i] == '_' || operands[i] == '$') {
      const bool after_dot = i > 0 && operands[i - 1] == '.';
      std::size_t j = i;
      while (j < operands.size() && is_ptx_ident_char(operands[j])) ++j;
      if (!after_dot) fn.symbols.insert(std::string(operands.substr(i, j - i)));
      i = j;
    } else if (operands[i] == '%' || std::isdigit(static_cast<unsigned char>(operands[i]))) {
      ++i;
      while (i < operands.size() && is_ptx_ident_char(operands[i])) ++i;
    } else {
      ++i;
    }
  }
}

void add_instruction(PtxFunction& fn, std::string_view text, int line, int loc_file, int loc_line) {
  PtxInstruction ins{.line = line, .loc_file = loc_file, .loc_line = loc_line};
  if (text.starts_with('@')) {
    ins.guarded = true;
    const std::size_t sp = text.find(' ');
    text = sp == std::string_view::npos ? std::string_view() : text.substr(sp + 1);
  }
  const std::size_t sp = text.find(' ');
  ins.opcode = std::string(text.substr(0, sp));
  if (ins.opcode.empty()) return;
  ins.operands = sp == std::string_view::npos ? "" : std::string(text.substr(sp + 1));
  if (ins.opcode == "call" || ins.opcode.starts_with("call.")) {
    // call[.uni] [(ret),] callee, (args): the callee is the first identifier outside parens.
    int depth = 0;
    for (std::size_t i = 0; i < ins.operands.size(); ++i) {
      const char c = ins.operands[i];
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (depth == 0 && (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$')) {
        std::size_t j = i;
        while (j < ins.operands.size() && is_ptx_ident_char(ins.operands[j])) ++j;
        fn.callees.push_back(ins.operands.substr(i, j - i));
        break;
      }
    }
  }
  collect_symbols(fn, ins.operands);
  fn.instructions.push_back(std::move(ins));
}

}  // namespace

std::int64_t ptx_type_bytes(std::string_view t) {
  if (t == "b8" || t == "u8" || t == "s8") return 1;
  if (t == "e4m3x2" || t == "e5m2x2") return 2;
  if (t == "b16" || t == "u16" || t == "s16" || t == "f16" || t == "bf16") return 2;
  if (t == "b32" || t == "u32" || t == "s32" || t == "f32" || t == "f16x2" || t == "bf16x2" || t == "tf32")
    return 4;
  if (t == "b64" || t == "u64" || t == "s64" || t == "f64") return 8;
  if (t == "b128") return 16;
  return 0;
}

const PtxFunction* PtxModule::find(std::string_view name) const {
  for (const auto& f : functions) {
    if (f.name == name && f.has_body) return &f;
  }
  return nullptr;
}

std::vector<const PtxFunction*> PtxModule::entries() const {
  std::vector<const PtxFunction*> out;
  for (const auto& f : functions) {
    if (f.is_entry && f.has_body) out.push_back(&f);
  }
  return out;
}

Expected<PtxModule> parse_ptx(std::string_view text, std::string_view file) {
  const auto statements = TRY(split_ptx(text, file));
  PtxModule module;
  module.file = std::string(file);
  PtxFunction* fn = nullptr;  // the function whose body we are in
  int depth = 0;
  int loc_file = 0, loc_line = 0;
  std::optional<PtxFunction> pending;  // a header waiting for its '{' (or ';')
  for (const PtxStatement& st : statements) {
    using K = PtxStatement::Kind;
    if (st.kind == K::open_block) {
      if (depth == 0) {
        if (!pending)
          return fail(ErrorKind::parse, fmt::format("{}:{}: '{{' outside a function body", file, st.line));
        pending->has_body = true;
        module.functions.push_back(std::move(*pending));
        pending.reset();
        fn = &module.functions.back();
        loc_file = loc_line = 0;
      }
      ++depth;
      continue;
    }
    if (st.kind == K::close_block) {
      if (--depth == 0) fn = nullptr;
      continue;
    }
    if (pending) {  // a header followed by ';' was a declaration (prototype) only
      module.functions.push_back(std::move(*pending));
      pending.reset();
    }
    if (st.kind == K::label) {
      if (fn) fn->labels[st.text] = fn->instructions.size();
      continue;
    }
    const std::string_view t = st.text;
    if (fn == nullptr) {
      if (t.find(".entry") != std::string_view::npos || t.find(".func") != std::string_view::npos) {
        pending = TRY(parse_header(t, st.line, file));
      } else if (t.starts_with(".version ")) {
        module.version = std::string(t.substr(9));
      } else if (t.starts_with(".target ")) {
        module.target = std::string(t.substr(8));
      } else if (t.starts_with(".address_size ")) {
        module.address_size = static_cast<int>(to_count(t.substr(14)).value_or(0));
      } else if (t.starts_with(".file ")) {
        const auto words = split_words(t.substr(6));
        const std::size_t q1 = t.find('"'), q2 = t.rfind('"');
        if (!words.empty() && q1 != std::string_view::npos && q2 > q1) {
          module.files[static_cast<int>(to_count(words[0]).value_or(0))] =
              std::string(t.substr(q1 + 1, q2 - q1 - 1));
        }
      } else if (auto var = variable_of(t, st.line)) {
        module.variables.push_back(std::move(*var));
      } else if (!t.starts_with('.')) {
        return fail(ErrorKind::parse, fmt::format("{}:{}: instruction '{}' outside a function body", file,
                                                  st.line, t.substr(0, 60)));
      }
      continue;
    }
    if (t.starts_with(".reg ")) {
      add_registers(*fn, t);
    } else if (t.starts_with(".loc ")) {
      const auto words = split_words(t.substr(5));
      if (words.size() >= 2) {
        loc_file = static_cast<int>(to_count(words[0]).value_or(0));
        loc_line = static_cast<int>(to_count(words[1]).value_or(0));
      }
    } else if (t.starts_with('.')) {
      if (auto var = variable_of(t, st.line); var && var->space != "global")
        fn->variables.push_back(std::move(*var));
    } else {
      add_instruction(*fn, t, st.line, loc_file, loc_line);
    }
  }
  if (pending) module.functions.push_back(std::move(*pending));
  return module;
}

}  // namespace gpuemu::artifact
