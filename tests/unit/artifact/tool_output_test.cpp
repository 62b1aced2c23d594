// Tests of artifact/tool_output.cpp on output captured from ptxas 13.5 and cuobjdump/nvdisasm
// (the live tools are exercised in lint_test.cpp when they are installed).
#include <gtest/gtest.h>

#include "artifact/toolchain.hpp"

namespace gpuemu::artifact {
namespace {

constexpr std::string_view kPtxas = R"OUT(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'spill' for 'sm_80'
ptxas info    : Function properties for spill
    216 bytes stack frame, 380 bytes spill stores, 428 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 216 bytes cumulative stack size, 372 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compile time = 83.869 ms
ptxas info    : Compiling entry function '_Z6matmulPKfS0_Pfi' for 'sm_80'
ptxas info    : Function properties for _Z6matmulPKfS0_Pfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]
ptxas info    : Function properties for _Z8dot_tilePA16_KfS1_ii
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)OUT";

TEST(PtxasInfo, ReadsEveryFunction) {
  const auto info = parse_ptxas_info(kPtxas);
  ASSERT_EQ(info.size(), 3u);
  const auto& spill = info.at("spill");
  EXPECT_EQ(spill.registers, 32);
  EXPECT_EQ(spill.stack_frame, 216);
  EXPECT_EQ(spill.spill_stores, 380);
  EXPECT_EQ(spill.spill_loads, 428);
  EXPECT_EQ(spill.constant, 380);
  EXPECT_EQ(spill.barriers, 0);
  EXPECT_FALSE(spill.shared);
  const auto& matmul = info.at("_Z6matmulPKfS0_Pfi");
  EXPECT_EQ(matmul.shared, 2048);
  EXPECT_EQ(matmul.barriers, 1);
  EXPECT_EQ(info.at("_Z8dot_tilePA16_KfS1_ii").stack_frame, 8);
  EXPECT_FALSE(info.at("_Z8dot_tilePA16_KfS1_ii").registers);
}

constexpr std::string_view kCuobjdump = R"OUT(
Resource usage:
 Common:
  GLOBAL:0
 Function saxpy_local:
  REG:32 STACK:1024 SHARED:0 LOCAL:0 CONSTANT[0]:380 TEXTURE:0 SURFACE:0 SAMPLER:0

	code for sm_80
		Function : saxpy_local
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                             /* 0x00000a0000017a02 */
                                                                                      /* 0x000fe40000000f00 */
        /*0010*/                   S2R R7, SR_TID.X ;                                 /* 0x0000000000077919 */
        /*0020*/              @!P0 BRA 0x60 ;                                         /* 0x000005d000008947 */
        /*0030*/                   STL.128 [R1], R4 ;                                 /* 0x0000000401007387 */
        /*0040*/                   LDL R0, [R1] ;                                     /* 0x0000000001007983 */
        /*0050*/                   EXIT ;                                             /* 0x000000000000794d */
        /*0060*/                   BRA 0x60;                                          /* 0xfffffff000007947 */
        /*0070*/                   NOP;                                               /* 0x0000000000007918 */
		..........
)OUT";

TEST(Sass, ReadsCuobjdumpListingAndResourceUsage) {
  const auto sass = parse_sass(kCuobjdump);
  ASSERT_EQ(sass.size(), 1u);
  const SassFunction& fn = sass.at("saxpy_local");
  EXPECT_EQ(fn.registers, 32);
  EXPECT_EQ(fn.stack, 1024);
  EXPECT_EQ(fn.constant, 380);
  const std::vector<std::string> expected = {"MOV", "S2R", "BRA", "STL.128", "LDL", "EXIT"};
  EXPECT_EQ(fn.opcodes, expected) << "padding (NOP, BRA to itself) is dropped, a guarded BRA kept";
}

constexpr std::string_view kNvdisasm = R"OUT(
//--------------------- .text._Z7mangledPf        --------------------------
	.section	.text._Z7mangledPf,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=10"
_Z7mangledPf:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00c0*/                   EXIT ;
.L_x_0:
        /*00d0*/                   BRA `(.L_x_0);
)OUT";

TEST(Sass, ReadsNvdisasmListing) {
  const auto sass = parse_sass(kNvdisasm);
  ASSERT_EQ(sass.size(), 1u);
  const SassFunction& fn = sass.at("_Z7mangledPf");
  EXPECT_EQ(fn.registers, 10);
  const std::vector<std::string> expected = {"MOV", "BAR.SYNC.DEFER_BLOCKING", "EXIT"};
  EXPECT_EQ(fn.opcodes, expected) << "the BRA to its own label is padding";
}

TEST(Sass, GarbageGivesNothingRatherThanACrash) {
  EXPECT_TRUE(parse_sass("/*zz*/ X\nFunction : \n/*0010*/\n/*0020*/ @P0\n").size() <= 1);
  EXPECT_TRUE(parse_ptxas_info("Used registers\nFunction properties for \n bytes stack frame").empty());
}

}  // namespace
}  // namespace gpuemu::artifact
