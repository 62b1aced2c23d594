// Tests of artifact/pattern.cpp: the opcode-token pattern syntax of docs/lint.md.
#include <gtest/gtest.h>

#include "artifact/pattern.hpp"

namespace gpuemu::artifact {
namespace {

bool match(std::string_view pattern, std::string_view opcode) {
  auto p = parse_pattern(pattern);
  EXPECT_TRUE(p) << pattern;
  return p && pattern_matches(*p, opcode);
}

TEST(Pattern, TokensMatchAnOrderedSubsequenceOfTheOpcode) {
  EXPECT_TRUE(match("ld.local", "ld.local.u32"));
  EXPECT_TRUE(match("ld.local", "ld.local.v4.f32"));
  EXPECT_TRUE(match("ld.local", "ld.volatile.local.u32"));
  EXPECT_FALSE(match("ld.local", "ld.global.u32"));
  EXPECT_FALSE(match("ld.local", "st.local.u32"));
  EXPECT_FALSE(match("local.ld", "ld.local.u32")) << "order matters";
  EXPECT_TRUE(match("ld", "ld.param.u64"));
  EXPECT_FALSE(match("ld", "ldu.global.f32")) << "the first token is the whole opcode name";
  EXPECT_TRUE(match("ld.f32", "ld.global.nc.f32"));
}

TEST(Pattern, StarsAndQuestionMarksGlobWithinOneToken) {
  EXPECT_TRUE(match("st.global.*", "st.global.f32"));
  EXPECT_FALSE(match("st.global.*", "st.global")) << "'*' still needs a token";
  EXPECT_TRUE(match("ld.v*", "ld.global.v4.f32"));
  EXPECT_TRUE(match("mma.*.f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
  EXPECT_TRUE(match("*", "ret"));
  EXPECT_TRUE(match("cvt.rn.f16?2", "cvt.rn.f16x2.f32"));
  EXPECT_TRUE(match("ld.shared", "ld.shared::cta.u32")) << "a state space matches its ::scope forms";
  EXPECT_TRUE(match("ld.shared::cta", "ld.shared::cta.u32"));
}

TEST(Pattern, UpperCaseOrPrefixMeansSass) {
  auto sass = parse_pattern("LDG.E.SYS");
  ASSERT_TRUE(sass);
  EXPECT_EQ(sass->target, OpcodePattern::Target::sass);
  EXPECT_TRUE(pattern_matches(*sass, "LDG.E.SYS"));
  EXPECT_TRUE(pattern_matches(*sass, "LDG.E.64.SYS"));
  EXPECT_FALSE(pattern_matches(*sass, "LDG.E"));
  EXPECT_EQ(parse_pattern("sass:*")->target, OpcodePattern::Target::sass);
  EXPECT_EQ(parse_pattern("ptx:ld.local")->target, OpcodePattern::Target::ptx);
  EXPECT_EQ(parse_pattern("ptx:ld.local")->tokens.size(), 2u);
  EXPECT_EQ(parse_pattern("ld.local")->target, OpcodePattern::Target::ptx);
}

TEST(Pattern, MalformedPatternsSayTheSyntax) {
  const std::string help =
      ": write dot-separated opcode tokens such as \"ld.local\", \"st.global.*\" or \"LDG.E.SYS\" (see "
      "docs/lint.md)";
  EXPECT_EQ(parse_pattern("").error().message, "instruction pattern '' is empty" + help);
  EXPECT_EQ(
      parse_pattern("ld..local").error().message,
      "instruction pattern 'ld..local' has an empty token (two dots in a row, or a leading or trailing dot)" +
          help);
  EXPECT_EQ(parse_pattern("ld local").error().message,
            "instruction pattern 'ld local' has the character ' '" + help);
  EXPECT_EQ(parse_pattern("sass:").error().kind, ErrorKind::config);
}

TEST(Pattern, GlobIsLinearOnPathologicalInput) {
  const std::string text(5000, 'a');
  EXPECT_FALSE(glob_match(std::string(50, '*') + "b", text));
  EXPECT_TRUE(glob_match("a*a*a*a", text));
}

}  // namespace
}  // namespace gpuemu::artifact
