// Tests of artifact/ptx_lexer.cpp and ptx_parser.cpp: the committed nvcc PTX, hand-written PTX
// with comments, strings, labels and multi-line statements, and errors that name file:line.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "artifact/ptx.hpp"
#include "artifact_test_support.hpp"

namespace gpuemu::artifact {
namespace {

using testing::read_kernel;

TEST(PtxParser, ReadsTheSaxpyModuleAndItsEntry) {
  auto module = parse_ptx(read_kernel("saxpy.ptx"), "saxpy.ptx");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(module->version, "9.5");
  EXPECT_EQ(module->target, "sm_80");
  EXPECT_EQ(module->address_size, 64);
  ASSERT_EQ(module->entries().size(), 1u);
  const PtxFunction& fn = *module->entries()[0];
  EXPECT_EQ(fn.name, "saxpy");
  EXPECT_TRUE(fn.visible);
  ASSERT_EQ(fn.params.size(), 4u);
  EXPECT_EQ(fn.params[0].type, "u32");
  EXPECT_EQ(fn.params[2].bytes, 8);
  EXPECT_EQ(fn.registers.at("pred"), 2);
  EXPECT_EQ(fn.registers.at("f32"), 5);
  EXPECT_EQ(fn.registers.at("b32"), 6);
  EXPECT_EQ(fn.registers.at("b64"), 8);
  EXPECT_EQ(fn.registers_32bit, 5 + 6 + 2 * 8);
  ASSERT_EQ(fn.instructions.size(), 20u);
  EXPECT_EQ(fn.instructions[0].opcode, "ld.param.u32");
  EXPECT_EQ(fn.instructions[9].opcode, "bra");
  EXPECT_TRUE(fn.instructions[9].guarded);
  EXPECT_EQ(fn.instructions.back().opcode, "ret");
  EXPECT_EQ(fn.labels.at("$L__BB0_2"), 19u);
  EXPECT_GT(fn.instructions[0].loc_line, 0) << "nvcc -lineinfo gives every instruction a .loc";
  EXPECT_EQ(module->files.at(1).substr(module->files.at(1).rfind('/') + 1), "saxpy.cu");
}

TEST(PtxParser, FindsFunctionsCallsAndModuleVariables) {
  auto module = parse_ptx(read_kernel("matmul_tile16.ptx"), "matmul_tile16.ptx");
  ASSERT_TRUE(module) << module.error().message;
  ASSERT_EQ(module->functions.size(), 2u);
  const PtxFunction& func = module->functions[0];
  EXPECT_FALSE(func.is_entry);
  EXPECT_EQ(func.name, "_Z8dot_tilePA16_KfS1_ii");
  ASSERT_EQ(func.returns.size(), 1u);
  EXPECT_EQ(func.returns[0].name, "func_retval0");
  const PtxFunction& entry = module->functions[1];
  EXPECT_TRUE(entry.is_entry);
  EXPECT_EQ(entry.performance.at("maxntid"), "256,1,1");
  EXPECT_FALSE(entry.callees.empty());
  EXPECT_EQ(entry.callees[0], "_Z8dot_tilePA16_KfS1_ii");
  EXPECT_EQ(entry.params.size(), 4u) << ".param declarations inside call sequences are not kernel params";
  ASSERT_EQ(module->variables.size(), 2u);
  EXPECT_EQ(module->variables[0].space, "shared");
  EXPECT_EQ(module->variables[0].bytes, 1024);
  EXPECT_TRUE(entry.symbols.contains(module->variables[0].name));
}

TEST(PtxParser, LocalDepotIsAFunctionScopeLocalVariable) {
  auto module = parse_ptx(read_kernel("saxpy_local.ptx"), "saxpy_local.ptx");
  ASSERT_TRUE(module) << module.error().message;
  const PtxFunction& fn = *module->entries()[0];
  ASSERT_EQ(fn.variables.size(), 1u);
  EXPECT_EQ(fn.variables[0].space, "local");
  EXPECT_EQ(fn.variables[0].bytes, 1024);
}

constexpr std::string_view kHandWritten = R"PTX(
.version 8.0 // trailing comment ; with a semicolon
.target sm_90a
.address_size 64
/* a block comment { with braces }
   across lines; */
.extern .shared .align 16 .b8 dyn[];
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.extern .func (.param .b32 r) vprintf(.param .b64 fmt, .param .b64 args);
.visible .entry k(.param .align 8 .b8 k_param_0[16], .param .u64 .ptr .global .align 4 k_param_1)
.reqntid 128, 1, 1
.maxnreg 64
{
  .reg .pred %p<3>;
  .reg .b32 %r1, %r2;
  .reg .v4 .f32 %v;
  .shared .align 4 .b8 s[256];
  .pragma "nounroll; {not a block}";
LOOP:
  ld.global.v4.f32 {%r1,
      %r2, %r1, %r2},
      [k_param_1];
  st.shared.u32 [s], %r1;
  ld.shared::cta.u32 %r2, [dyn];
  @!%p1 bra LOOP;
  bar.sync 0;
  { .reg .b32 inner; mov.b32 inner, 1; }
  ret;
}
)PTX";

TEST(PtxParser, HandlesCommentsStringsVectorsAndMultiLineStatements) {
  auto module = parse_ptx(kHandWritten, "hand.ptx");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(module->target, "sm_90a");
  ASSERT_EQ(module->functions.size(), 2u);
  EXPECT_FALSE(module->functions[0].has_body) << "vprintf is only declared";
  const PtxFunction* k = module->find("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->line, 10);
  ASSERT_EQ(k->params.size(), 2u);
  EXPECT_EQ(k->params[0].bytes, 16);
  EXPECT_EQ(k->params[0].align, 8);
  EXPECT_EQ(k->performance.at("reqntid"), "128,1,1");
  EXPECT_EQ(k->performance.at("maxnreg"), "64");
  EXPECT_EQ(k->registers.at("pred"), 3);
  EXPECT_EQ(k->registers.at("b32"), 3) << "%r1, %r2 and the scoped 'inner'";
  EXPECT_EQ(k->registers.at("f32"), 4) << "one .v4 register is four scalars";
  ASSERT_EQ(k->instructions.size(), 7u);
  EXPECT_EQ(k->instructions[0].opcode, "ld.global.v4.f32");
  EXPECT_EQ(k->instructions[0].line, 20);
  EXPECT_EQ(k->instructions[2].opcode, "ld.shared::cta.u32");
  EXPECT_TRUE(k->instructions[3].guarded);
  EXPECT_EQ(k->labels.at("LOOP"), 0u);
  ASSERT_EQ(k->variables.size(), 1u);
  EXPECT_EQ(k->variables[0].bytes, 256);
  ASSERT_EQ(module->variables.size(), 2u);
  EXPECT_TRUE(module->variables[0].is_extern);
  EXPECT_EQ(module->variables[1].bytes, 8);
  EXPECT_TRUE(k->symbols.contains("dyn"));
}

struct BadPtx {
  std::string_view text;
  std::string message;
};

TEST(PtxParser, MalformedInputIsAnErrorNamingFileAndLine) {
  const BadPtx cases[] = {
      {".version 8.0\n/* never closed\n", "bad.ptx:2: '/*' comment is never closed"},
      {".entry k()\n{\n  ret;\n", "bad.ptx:2: '{' opened here is never closed (missing '}')"},
      {".entry k()\n{\n  ret;\n}\n}\n", "bad.ptx:5: '}' without a matching '{'"},
      {".entry k()\n{\n  mov.u32 %r1, 1\n}\n",
       "bad.ptx:3: statement 'mov.u32 %r1, 1' is not terminated by ';' before '}'"},
      {".version 8.0\nadd.s32 %r1, %r2, %r3;\n",
       "bad.ptx:2: instruction 'add.s32 %r1, %r2, %r3' outside a function body"},
      {".pragma \"open\n;", "bad.ptx:1: string literal is not closed on its line"},
      {"{\n}\n", "bad.ptx:1: '{' outside a function body"},
      {".version 8.0\n.global .b32 x", "bad.ptx:2: statement '.global .b32 x' is not terminated by ';'"},
      {".entry (.param .b32 x)\n{\n}\n", "bad.ptx:1: missing function name in '.entry (.param .b32 x)'"},
  };
  for (const auto& c : cases) {
    auto module = parse_ptx(c.text, "bad.ptx");
    ASSERT_FALSE(module) << c.text;
    EXPECT_EQ(module.error().message, c.message);
    EXPECT_EQ(module.error().kind, ErrorKind::parse);
  }
}

TEST(PtxParser, NeverCrashesOnMutatedOrRandomInput) {
  const std::string base = read_kernel("matmul_tile16.ptx");
  std::mt19937_64 rng(12345);
  const std::string alphabet = "{}();:.,@%$\"/*\n abc019[]<>=";
  int parsed = 0;
  for (int round = 0; round < 400; ++round) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(at, rng() % 40);
          break;
        default:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
      }
    }
    if (round % 4 == 0) text = text.substr(0, rng() % text.size());
    auto module = parse_ptx(text, "mutated.ptx");
    if (module) {
      ++parsed;
    } else {
      EXPECT_TRUE(module.error().message.starts_with("mutated.ptx:")) << module.error().message;
    }
  }
  EXPECT_GT(parsed, 0) << "some mutations (e.g. inside comments) still parse";
}

// Found by harness_ptx's throughput (docs/parser-harnesses.md): the lexer copied the statement so far at
// every character, so one 1 MB statement took about a minute; it must be linear.
TEST(PtxParser, ALongStatementSplitsInLinearTime) {
  const std::string name(1 << 20, 'x');
  const std::string text = ".version 9.5\n.target sm_80\n.global .u32 " + name + ";\n";
  const auto start = std::chrono::steady_clock::now();
  auto statements = split_ptx(text, "long.ptx");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(statements) << statements.error().message;
  ASSERT_EQ(statements->size(), 3u);
  EXPECT_EQ(statements->back().text, ".global .u32 " + name);
  EXPECT_LT(elapsed, std::chrono::seconds(5)) << "quadratic in the statement's length";
}

}  // namespace
}  // namespace gpuemu::artifact
