// Tests of artifact/lint.cpp and ptx_metrics.cpp on the committed kernels under tests/kernels:
// PTX-only metrics and checks (no tools), then real ptxas/SASS numbers when the tools are here.
#include <gtest/gtest.h>

#include "artifact/lint.hpp"
#include "artifact_test_support.hpp"

namespace gpuemu::artifact {
namespace {

using testing::kernel_path;

std::int64_t num(const KernelReport& r, const std::string& name) {
  const auto it = r.metrics.find(name);
  EXPECT_NE(it, r.metrics.end()) << "no metric " << name;
  return it == r.metrics.end() ? -1 : it->second.number().value_or(-1);
}

KernelReport ptx_only(const std::string& file, config::ArtifactChecks checks = {}) {
  auto a = build_artifact(Toolchain{}, kernel_path(file), "");
  EXPECT_TRUE(a) << (a ? "" : a.error().message);
  const auto names = a->kernels();
  EXPECT_EQ(names.size(), 1u);
  auto r = evaluate(*a, names.at(0), checks);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return *r;
}

TEST(LintPtx, SaxpyMetricsComeFromThePtx) {
  const KernelReport r = ptx_only("saxpy.ptx");
  EXPECT_EQ(r.entry, "saxpy");
  EXPECT_EQ(r.arch, "sm_80") << "from the PTX .target";
  EXPECT_EQ(num(r, "params"), 4);
  EXPECT_EQ(num(r, "param_bytes"), 24);
  EXPECT_EQ(num(r, "virtual_registers"), 21);
  EXPECT_EQ(num(r, "virtual_registers.f32"), 5);
  EXPECT_EQ(num(r, "instructions"), 20);
  EXPECT_EQ(num(r, "ld.global"), 2);
  EXPECT_EQ(num(r, "st.global"), 1);
  EXPECT_EQ(num(r, "ld.param"), 4);
  EXPECT_EQ(num(r, "fma"), 2) << "mad.lo and fma.rn";
  EXPECT_EQ(num(r, "branches"), 1);
  EXPECT_EQ(num(r, "conditional_branches"), 1);
  EXPECT_EQ(num(r, "backward_branches"), 0);
  EXPECT_EQ(num(r, "local_memory_bytes"), 0);
  EXPECT_EQ(r.metrics.at("instructions").from, Origin::ptx);
  EXPECT_EQ(std::get<std::string>(r.metrics.at("ptx_version").value), "9.5");
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.line, 15) << "the .entry line of saxpy.ptx";
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("ptxas not found"), std::string::npos);
}

TEST(LintPtx, LocalArrayFailsTheLocalMemoryCheck) {
  config::ArtifactChecks checks;
  checks.forbidden_instructions = {"ld.local", "st.global.*"};
  checks.max_registers = 255;  // the PTX upper bound of this kernel is 185
  const KernelReport r = ptx_only("saxpy_local.ptx", checks);
  EXPECT_EQ(num(r, "local_memory_bytes"), 1024);
  EXPECT_EQ(num(r, "st.local"), 4);
  EXPECT_EQ(num(r, "ld.local"), 1);
  EXPECT_EQ(num(r, "backward_branches"), 1) << "the fill loop";
  ASSERT_EQ(r.violations.size(), 3u);
  EXPECT_EQ(r.violations[0].check, "max_local_memory_bytes");
  EXPECT_EQ(
      r.violations[0].message,
      "local_memory_bytes is 1024 (ptx), above max_local_memory_bytes = 0; a per-thread array indexed at run "
      "time, or spills, live in slow local memory");
  EXPECT_EQ(r.violations[1].check, "forbidden_instructions");
  EXPECT_EQ(r.violations[1].message,
            "forbidden instruction 'ld.local' matched 1 time(s), first 'ld.local.f32'");
  EXPECT_EQ(r.violations[1].file.filename(), "saxpy_local.cu")
      << "mapped through .loc/.file to the CUDA source";
  EXPECT_EQ(r.violations[1].line, 8) << "y[i] = history[pick & 255] + y[i];";
  EXPECT_EQ(r.violations[2].message,
            "forbidden instruction 'st.global.*' matched 1 time(s), first 'st.global.f32'");
}

TEST(LintPtx, VirtualRegistersAreAnUpperBoundWithoutPtxas) {
  config::ArtifactChecks checks;
  checks.max_local_memory_bytes = 1 << 20;
  const KernelReport r = ptx_only("spill.ptx", checks);
  EXPECT_EQ(std::get<std::string>(r.metrics.at("maxntid").value), "1024,1,1");
  EXPECT_EQ(std::get<std::string>(r.metrics.at("minnctapersm").value), "2");
  EXPECT_EQ(num(r, "virtual_registers_32bit"), 337 + 15 + 2 * 9);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].check, "max_registers");
  EXPECT_NE(r.violations[0].message.find("upper bound"), std::string::npos) << r.violations[0].message;
  bool spills_note = false;
  for (const auto& note : r.notes)
    spills_note |= note == "max_spills = 0 not checked: spills are known only from ptxas";
  EXPECT_TRUE(spills_note);
}

TEST(LintPtx, UnrollingMultipliesLoadsNotLoops) {
  const KernelReport rolled = ptx_only("reduce_loop.ptx");
  const KernelReport unrolled = ptx_only("reduce_unrolled.ptx");
  EXPECT_EQ(num(rolled, "ld.global"), 1);
  EXPECT_EQ(num(unrolled, "ld.global"), 8);
  EXPECT_GT(num(unrolled, "instructions"), 2 * num(rolled, "instructions"));
  EXPECT_EQ(num(rolled, "backward_branches"), 1);
  EXPECT_EQ(num(unrolled, "backward_branches"), 1);
  EXPECT_EQ(num(rolled, "atomics"), 1);
  EXPECT_EQ(num(rolled, "atom.global"), 1);
}

TEST(LintPtx, TileConstantChangesSharedMemoryAndCalleesCount) {
  const KernelReport t16 = ptx_only("matmul_tile16.ptx");
  const KernelReport t32 = ptx_only("matmul_tile32.ptx");
  EXPECT_EQ(num(t16, "shared_memory_bytes"), 2 * 16 * 16 * 4);
  EXPECT_EQ(num(t32, "shared_memory_bytes"), 2 * 32 * 32 * 4);
  EXPECT_EQ(num(t16, "functions_called"), 1);
  EXPECT_GT(num(t16, "calls"), 0);
  EXPECT_GE(num(t16, "barriers"), 2);
  EXPECT_GT(num(t32, "instructions"), num(t16, "instructions")) << "the dot product over a longer tile";
}

TEST(LintPtx, RequiredInstructions) {
  config::ArtifactChecks checks;
  checks.required_instructions = {"mma.sync.*.f16", "ld.shared"};
  const KernelReport r = ptx_only("mma_tile.ptx", checks);
  EXPECT_EQ(num(r, "tensor_core"), 1);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].check, "required_instructions");
  EXPECT_EQ(r.violations[0].message,
            "required instruction 'ld.shared' does not occur in the PTX of 'mma_tile'");
  checks.required_instructions = {"HMMA"};
  const KernelReport sass_pattern = ptx_only("mma_tile.ptx", checks);
  EXPECT_TRUE(sass_pattern.passed()) << "a SASS pattern is not checked without SASS";
  EXPECT_EQ(sass_pattern.notes.back().substr(0, 61),
            "required_instructions pattern 'HMMA' not checked: no SASS for");
}

TEST(LintNames, ConfiguredNamesResolveToMangledEntries) {
  const std::vector<std::string> names = {"saxpy", "_Z6matmulPKfS0_Pfi", "_ZN3ops4gemmEPf"};
  EXPECT_EQ(resolve_kernel_name("saxpy", names), "saxpy");
  EXPECT_EQ(resolve_kernel_name("matmul", names), "_Z6matmulPKfS0_Pfi");
  EXPECT_EQ(resolve_kernel_name("ops::gemm", names), "_ZN3ops4gemmEPf");
  EXPECT_EQ(resolve_kernel_name("gemm", names), "_ZN3ops4gemmEPf");
  EXPECT_FALSE(resolve_kernel_name("mat", names));
  EXPECT_FALSE(resolve_kernel_name("x", {"_Z1xPf", "_Z1xPd"})) << "an overloaded name is ambiguous";
  EXPECT_FALSE(resolve_kernel_name("x", {"_Z99999999999x"}));
}

TEST(LintKernel, UnknownKernelNameNamesTheConfigLine) {
  Linter linter{Toolchain{}};
  config::KernelConfig k;
  k.name = "saxpi";
  k.source = kernel_path("saxpy.ptx");
  k.location = {"/p/gpuemu.toml", 12, 1};
  auto r = linter.lint_kernel(k);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::config);
  EXPECT_EQ(r.error().message, "/p/gpuemu.toml:12: kernel 'saxpi' is not defined in " + k.source.string() +
                                   " (did you mean 'saxpy'?); it defines: saxpy");
  k.name = "saxpy";
  k.artifact_checks.forbidden_instructions = {"ld..x"};
  EXPECT_EQ(linter.lint_kernel(k).error().message.substr(0, 44),
            "/p/gpuemu.toml:12: kernel 'saxpy': instructi");
}

TEST(LintKernel, CudaSourceWithoutNvccSaysHowToInstallIt) {
  Linter linter{Toolchain{}};
  config::KernelConfig k;
  k.name = "saxpy";
  k.source = kernel_path("saxpy.cu");
  auto r = linter.lint_kernel(k);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::environment);
  EXPECT_NE(r.error().message.find("python3 -m pip install nvidia-cuda-nvcc"), std::string::npos)
      << r.error().message;
}

// ---- with the real CUDA tools ----

TEST(LintTools, PtxasReportsSpillsAndRealRegisters) {
  REQUIRE_TOOL(ptxas, "ptxas");
  Linter linter{testing::discovered_tools()};
  auto reports = linter.lint_file(kernel_path("spill.ptx"), "", std::nullopt);
  ASSERT_TRUE(reports) << reports.error().message;
  const KernelReport& r = reports->at(0);
  EXPECT_EQ(r.metrics.at("registers").from, Origin::ptxas);
  EXPECT_LE(num(r, "registers"), 32) << "__launch_bounds__(1024, 2) caps registers at 32";
  EXPECT_GT(num(r, "spill_stores_bytes"), 0);
  EXPECT_GT(num(r, "spills"), 0);
  EXPECT_GT(num(r, "local_memory_bytes"), 0);
  EXPECT_EQ(r.metrics.at("local_memory_bytes").from, Origin::ptxas);
  bool spill_violation = false;
  for (const auto& v : r.violations) spill_violation |= v.check == "max_spills" && v.from == "ptxas";
  EXPECT_TRUE(spill_violation);
}

TEST(LintTools, PtxasSeesTheLocalArrayAndNoSpillsInTheCorrectKernel) {
  REQUIRE_TOOL(ptxas, "ptxas");
  Linter linter{testing::discovered_tools()};
  auto local = linter.lint_file(kernel_path("saxpy_local.ptx"), "sm_80", std::nullopt);
  ASSERT_TRUE(local) << local.error().message;
  EXPECT_EQ(num(local->at(0), "stack_frame_bytes"), 1024);
  EXPECT_EQ(num(local->at(0), "spills"), 0);
  auto plain = linter.lint_file(kernel_path("saxpy.ptx"), "sm_80", std::nullopt);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_TRUE(plain->at(0).passed());
  EXPECT_EQ(num(plain->at(0), "local_memory_bytes"), 0);
  EXPECT_EQ(num(plain->at(0), "spills"), 0);
  EXPECT_LT(num(plain->at(0), "registers"), num(plain->at(0), "virtual_registers_32bit"));
}

TEST(LintTools, SassOpcodesAndPatterns) {
  REQUIRE_TOOL(ptxas, "ptxas");
  if (!testing::discovered_tools().nvdisasm) REQUIRE_TOOL(cuobjdump, "cuobjdump");
  Linter linter{testing::discovered_tools()};
  config::ArtifactChecks checks;
  checks.max_local_memory_bytes = 4096;
  checks.forbidden_instructions = {"LDL", "sass:STL.*"};
  auto r = linter.lint_file(kernel_path("saxpy_local.ptx"), "sm_80", std::nullopt, checks);
  ASSERT_TRUE(r) << r.error().message;
  const KernelReport& k = r->at(0);
  EXPECT_GT(num(k, "sass.instructions"), 10);
  EXPECT_GT(num(k, "sass.LDL"), 0);
  EXPECT_EQ(k.metrics.at("sass.LDL").from, Origin::sass);
  ASSERT_EQ(k.violations.size(), 2u);
  EXPECT_EQ(k.violations[0].from, "sass");
  checks.forbidden_instructions = {};
  checks.required_instructions = {"HMMA.16816.*"};
  auto mma = linter.lint_file(kernel_path("mma_tile.ptx"), "sm_80", std::nullopt, checks);
  ASSERT_TRUE(mma) << mma.error().message;
  EXPECT_TRUE(mma->at(0).passed()) << report_to_json(mma->at(0), {}).dump(2);
}

TEST(LintTools, CubinSourceHasSassOnly) {
  REQUIRE_TOOL(ptxas, "ptxas");
  REQUIRE_TOOL(cuobjdump, "cuobjdump");
  auto dir = TempDir::create();
  ASSERT_TRUE(dir);
  const auto cubin = dir->path() / "saxpy_local.cubin";
  ASSERT_TRUE(assemble_ptx(testing::discovered_tools(), kernel_path("saxpy_local.ptx"), "sm_80", cubin));
  Linter linter{testing::discovered_tools()};
  auto r = linter.lint_file(cubin, "", std::nullopt);
  ASSERT_TRUE(r) << r.error().message;
  const KernelReport& k = r->at(0);
  EXPECT_EQ(k.entry, "saxpy_local");
  EXPECT_GT(num(k, "registers"), 0);
  EXPECT_EQ(k.metrics.at("registers").from, Origin::sass);
  EXPECT_EQ(num(k, "local_memory_bytes"), 1024);
  EXPECT_FALSE(k.metrics.contains("instructions")) << "no PTX in a cubin";
  EXPECT_FALSE(k.passed());
}

TEST(LintTools, CudaSourceCompilesToTheCommittedPtx) {
  REQUIRE_TOOL(nvcc, "nvcc");
  Linter linter{testing::discovered_tools()};
  config::KernelConfig k;
  k.name = "matmul";
  k.source = kernel_path("matmul_tile16.cu");
  auto from_cu = linter.lint_kernel(k);
  ASSERT_TRUE(from_cu) << from_cu.error().message;
  const KernelReport committed = ptx_only("matmul_tile16.ptx");
  EXPECT_EQ(from_cu->entry, "_Z6matmulPKfS0_Pfi");
  EXPECT_EQ(num(*from_cu, "instructions"), num(committed, "instructions"))
      << "tests/kernels/*.ptx is stale: run tests/kernels/regenerate.sh";
  EXPECT_EQ(from_cu->file, k.source);
  EXPECT_EQ(from_cu->line, 12) << "the kernel's line in matmul_tile16.cu";
}

}  // namespace
}  // namespace gpuemu::artifact
