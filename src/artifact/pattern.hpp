// Opcode-token patterns for forbidden_instructions and required_instructions (docs/lint.md):
// "ld.local", "st.global.*", "mma.*.f16", "LDG.E.SYS", optionally prefixed "ptx:" or "sass:".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::artifact {

// Splits an opcode at its dots: "ld.global.nc.f32" -> {"ld", "global", "nc", "f32"}. Never empty.
std::vector<std::string> opcode_tokens(std::string_view opcode);

struct OpcodePattern {
  enum class Target { ptx, sass };
  Target target = Target::ptx;
  std::vector<std::string> tokens;
  std::string text;  // as written, for messages
};

// A pattern is SASS when prefixed "sass:" or when it has an upper-case letter, else PTX
// ("ptx:" forces PTX). Errors (config) for empty tokens or characters outside [A-Za-z0-9_*?:].
Expected<OpcodePattern> parse_pattern(std::string_view text);

// The first pattern token matches the opcode's first token; every further pattern token matches
// a later opcode token, in order, not necessarily adjacent. Tokens match by glob ('*' any run,
// '?' one character), and "shared" also matches "shared::cta".
bool pattern_matches(const OpcodePattern& pattern, std::string_view opcode);

// Glob match of one token: '*' any run of characters, '?' exactly one.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace gpuemu::artifact
