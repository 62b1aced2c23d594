// Parsers of what the CUDA tools print (toolchain.hpp): ptxas -v "info" lines per function, and
// the SASS listing plus resource usage of cuobjdump -res-usage -sass or nvdisasm -c.
#include <cctype>
#include <charconv>
#include <regex>

#include "artifact/ptx.hpp"
#include "artifact/toolchain.hpp"

namespace gpuemu::artifact {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The integer written right before `suffix` in `line` ("380 bytes spill stores"), if any.
std::optional<std::int64_t> number_before(std::string_view line, std::string_view suffix) {
  const std::size_t at = line.rfind(suffix);
  if (at == std::string_view::npos || at < 2) return std::nullopt;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  std::size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(line[start - 1]))) --start;
  return start == end ? std::nullopt : parse_int(line.substr(start, end - start));
}

// The text between the first pair of single quotes, or "".
std::string quoted(std::string_view line) {
  const std::size_t a = line.find('\'');
  const std::size_t b = a == std::string_view::npos ? a : line.find('\'', a + 1);
  return b == std::string_view::npos ? std::string() : std::string(line.substr(a + 1, b - a - 1));
}

// One instruction line of a SASS listing.
struct SassLine {
  std::string opcode;
  std::int64_t address = 0;
  std::optional<std::int64_t> target;  // of a BRA to an address or a label
};

}  // namespace

std::map<std::string, PtxasFunctionInfo> parse_ptxas_info(std::string_view text) {
  std::map<std::string, PtxasFunctionInfo> out;
  std::string current;
  for (std::string_view line : lines_of(text)) {
    if (line.find("Compiling entry function") != std::string_view::npos) {
      current = quoted(line);
    } else if (auto at = line.find("Function properties for "); at != std::string_view::npos) {
      current = std::string(trim(line.substr(at + 24)));
    }
    if (current.empty()) continue;
    PtxasFunctionInfo& info = out[current];
    if (auto n = number_before(line, "bytes stack frame")) info.stack_frame = n;
    if (auto n = number_before(line, "bytes spill stores")) info.spill_stores = n;
    if (auto n = number_before(line, "bytes spill loads")) info.spill_loads = n;
    if (auto n = number_before(line, "registers")) info.registers = n;
    if (auto n = number_before(line, "barriers")) info.barriers = n;
    if (auto n = number_before(line, "bytes smem")) info.shared = n;
    if (auto n = number_before(line, "bytes lmem")) info.lmem = n;
    // Constant banks: "360 bytes cmem[0], 8 bytes cmem[2]" -> 368.
    for (std::size_t at = line.find("bytes cmem["); at != std::string_view::npos;
         at = line.find("bytes cmem[", at + 1)) {
      const std::string_view head = line.substr(0, at + 5);
      if (auto n = number_before(head, head.substr(at))) info.constant = info.constant.value_or(0) + *n;
    }
  }
  std::erase_if(out, [](const auto& kv) { return kv.first.empty(); });
  return out;
}

std::map<std::string, SassFunction> parse_sass(std::string_view text) {
  std::map<std::string, SassFunction> out;
  std::map<std::string, std::vector<SassLine>> code;
  static const std::regex resources(R"(([A-Z]+)(?:\[\d+\])?:(\d+))");
  std::string sass_fn, res_fn;
  std::map<std::string, std::int64_t> labels;  // nvdisasm labels of the current function -> address
  std::vector<std::string> pending_labels;
  for (std::string_view raw : lines_of(text)) {
    const std::string_view line = trim(raw);
    if (line.starts_with("Function : ")) {  // cuobjdump -sass
      sass_fn = std::string(trim(line.substr(11)));
      out[sass_fn].name = sass_fn;
    } else if (line.starts_with("Function ") && line.ends_with(":")) {  // cuobjdump -res-usage
      res_fn = std::string(trim(line.substr(9, line.size() - 10)));
      out[res_fn].name = res_fn;
    } else if (line.starts_with("//--------------------- .text.")) {  // nvdisasm
      const std::string_view rest = line.substr(30);
      sass_fn = std::string(rest.substr(0, rest.find(' ')));
      out[sass_fn].name = sass_fn;
      labels.clear();
    } else if (line.starts_with(".sectioninfo") && !sass_fn.empty()) {
      if (auto at = line.find("SHI_REGISTERS="); at != std::string_view::npos) {
        std::size_t end = at + 14;
        while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
        out[sass_fn].registers = parse_int(line.substr(at + 14, end - at - 14));
      }
    } else if (line.starts_with("REG:") && !res_fn.empty()) {
      SassFunction& f = out[res_fn];
      const std::string s(line);
      for (std::sregex_iterator it(s.begin(), s.end(), resources), end; it != end; ++it) {
        const std::string key = (*it)[1];
        const auto value = parse_int((*it)[2].str());
        if (key == "REG") f.registers = value;
        if (key == "STACK") f.stack = value;
        if (key == "SHARED") f.shared = value;
        if (key == "LOCAL") f.local = value;
        if (key == "CONSTANT") f.constant = f.constant.value_or(0) + value.value_or(0);
      }
    } else if (line.starts_with("/*") && !sass_fn.empty()) {  // "/*0050*/ @!P0 LDG.E R0, [R2.64] ;"
      const std::size_t close = line.find("*/");
      const auto address =
          close == std::string_view::npos ? std::nullopt : parse_int(line.substr(2, close - 2), 16);
      if (!address) continue;
      std::string_view ins = trim(line.substr(close + 2));
      if (ins.starts_with('{')) ins = trim(ins.substr(1));
      if (ins.starts_with('@')) ins = trim(ins.substr(std::min(ins.find(' '), ins.size())));
      const std::size_t stop = ins.find_first_of(" ;");
      std::string opcode(ins.substr(0, stop));
      if (opcode.empty()) continue;
      std::optional<std::int64_t> target;
      for (auto& label : pending_labels) labels[std::move(label)] = *address;
      pending_labels.clear();
      if (opcode == "BRA" && stop != std::string_view::npos) {
        std::string_view operand = trim(ins.substr(stop));
        if (operand.starts_with("0x"))
          target = parse_int(operand.substr(2, operand.find_first_of(" ;") - 2), 16);
        if (operand.starts_with("`(")) {  // nvdisasm: BRA `(.L_x_0)
          const std::string label(operand.substr(2, operand.find(')') - 2));
          if (auto it = labels.find(label); it != labels.end()) target = it->second;
        }
      }
      code[sass_fn].push_back(SassLine{std::move(opcode), *address, target});
    } else if (line.ends_with(':') && !line.starts_with("/*") && !sass_fn.empty()) {
      pending_labels.emplace_back(line.substr(0, line.size() - 1));
    }
  }
  for (auto& [name, instructions] : code) {
    // Alignment padding after the last real instruction: NOPs and a BRA to itself.
    while (!instructions.empty() && (instructions.back().opcode == "NOP" ||
                                     (instructions.back().opcode == "BRA" &&
                                      instructions.back().target == instructions.back().address))) {
      instructions.pop_back();
    }
    for (auto& p : instructions) out[name].opcodes.push_back(std::move(p.opcode));
  }
  std::erase_if(out, [](const auto& kv) { return kv.first.empty(); });
  return out;
}

}  // namespace gpuemu::artifact
