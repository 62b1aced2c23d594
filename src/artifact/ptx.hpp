// The PTX model of one file: module directives, module-scope variables and one PtxFunction per
// .entry/.func with its registers, params, variables and instructions (docs/lint.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::artifact {

// One statement of PTX after comments are removed and whitespace is collapsed to single spaces.
struct PtxStatement {
  enum class Kind { statement, label, open_block, close_block };
  Kind kind = Kind::statement;
  std::string text;  // the statement without its ';', or the label name
  int line = 0;      // 1-based line of its first character
};

// Splits PTX text into statements, labels and block braces. Errors (parse) name file:line for an
// unterminated comment or string, an unmatched brace, or a statement missing its ';'.
Expected<std::vector<PtxStatement>> split_ptx(std::string_view text, std::string_view file);

struct PtxInstruction {
  std::string opcode;  // "ld.global.nc.f32", without the guard
  bool guarded = false;
  std::string operands;  // as written, whitespace collapsed
  int line = 0;          // line in the PTX file
  int loc_file = 0;      // from the last .loc before it (0: none)
  int loc_line = 0;
};

struct PtxParam {
  std::string name;
  std::string type;  // "u64", "b8", ... ("" when the declaration names none)
  std::int64_t bytes = 0;
  std::int64_t align = 0;
};

// A .local/.shared/.const/.global declaration, at module or function scope.
struct PtxVariable {
  std::string name;
  std::string space;  // "local", "shared", "const", "global"
  std::int64_t bytes = 0;
  bool is_extern = false;  // .extern .shared: dynamic shared memory (size 0 here)
  int line = 0;
};

struct PtxFunction {
  std::string name;
  bool is_entry = false;
  bool visible = false;
  bool has_body = false;  // false for a prototype such as ".extern .func vprintf(...);"
  int line = 0;           // of the .entry/.func keyword
  std::vector<PtxParam> params;
  std::vector<PtxParam> returns;
  std::map<std::string, std::int64_t> registers;  // class ("f32", "b64", "pred") -> count
  std::int64_t registers_32bit = 0;               // 32-bit register equivalents (pred: 0, 64-bit: 2)
  std::vector<PtxVariable> variables;             // function-scope .local/.shared/.const
  std::vector<PtxInstruction> instructions;
  std::map<std::string, std::size_t> labels;       // label -> index of the next instruction
  std::map<std::string, std::string> performance;  // "maxntid" -> "256,1,1", "minnctapersm" -> "2"
  std::set<std::string> symbols;                   // identifiers used in operands (module variables)
  std::vector<std::string> callees;                // in call order, duplicates kept
};

struct PtxModule {
  std::string file;
  std::string version;  // ".version 9.5" -> "9.5"
  std::string target;   // ".target sm_80" -> "sm_80" (with options: "sm_80, debug")
  int address_size = 0;
  std::map<int, std::string> files;  // .file index -> path as written
  std::vector<PtxVariable> variables;
  std::vector<PtxFunction> functions;

  const PtxFunction* find(std::string_view name) const;
  std::vector<const PtxFunction*> entries() const;
};

// Parses one PTX file. `file` names it in errors ("file:line: message"). Never throws on any input.
Expected<PtxModule> parse_ptx(std::string_view text, std::string_view file);

// Bytes of one element of a PTX type name without the dot ("f32" -> 4), 0 when unknown.
std::int64_t ptx_type_bytes(std::string_view type);

// Lexical helpers shared by the PTX lexer, the parser and the tool-output readers.
bool is_ptx_ident_char(char c);
// A whole integer in `base` (sign allowed); nullopt when anything else is in `s`.
std::optional<std::int64_t> parse_int(std::string_view s, int base = 10);

}  // namespace gpuemu::artifact
