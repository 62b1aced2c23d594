// Loading a complete gpuemu.toml: every section and key, defaults, runnable resolution, input
// names and shapes, tolerance precedence and project-file discovery.
#include "config/loader.hpp"
#include "../support/temp_dir.hpp"
#include "config_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuemu::config {
namespace {

using namespace fixtures;

namespace fs = std::filesystem;
using tensor::DType;

Config load_fixture() {
  auto config = load_config(ConfigSources{kProject / "gpuemu.toml", std::nullopt, std::nullopt});
  if (!config) ADD_FAILURE() << config.error().message;
  return config ? *config : Config{};
}

TEST(ConfigLoader, ReadsProjectValidationPoliciesAndCi) {
  const Config c = load_fixture();
  EXPECT_EQ(c.project.name, "fixture-project");
  EXPECT_EQ(c.project.version, "1.2.3");
  EXPECT_EQ(c.project.framework, "jax");
  EXPECT_EQ(c.project_file, kProject / "gpuemu.toml");
  EXPECT_EQ(c.root, kProject);

  const ValidationConfig& v = c.validation;
  EXPECT_EQ(v.dtypes, (std::vector{DType::float32, DType::float16, DType::bfloat16}));
  EXPECT_TRUE(v.check_nan);
  EXPECT_FALSE(v.check_inf);
  EXPECT_EQ(v.seed, 18446744073709551615ULL);
  EXPECT_DOUBLE_EQ(v.timeout, 12.5);
  EXPECT_EQ(v.python, "python3");
  EXPECT_EQ(v.python_path, std::vector<fs::path>{kProject / "pylib"});
  EXPECT_EQ(v.test_cases, 6);
  EXPECT_EQ(v.fuzz_iterations, 250);
  EXPECT_EQ(v.worker_max_cases, 50);
  EXPECT_EQ(v.tolerances.at(DType::float16), (check::ToleranceSpec{2e-2, 3e-2}));
  // A missing rtol falls back to the built-in default for that dtype.
  EXPECT_EQ(v.tolerances.at(DType::float64),
            (check::ToleranceSpec{1e-9, check::default_tolerance(DType::float64).rtol}));

  EXPECT_FALSE(c.policies.fail_on_regression);
  EXPECT_DOUBLE_EQ(c.policies.warn_threshold, 0.5);
  EXPECT_DOUBLE_EQ(c.policies.max_error_growth, 3.0);
  EXPECT_EQ(c.policies.artifact_thresholds,
            (std::map<std::string, double>{{"registers", 1.1}, {"spills", 0.0}}));

  EXPECT_EQ(c.ci.quick_dtypes, (std::vector{DType::float32, DType::float16}));
  EXPECT_EQ(c.ci.thorough_timeout, 900);
  EXPECT_EQ(c.ci.parallel_jobs, 4);
  EXPECT_EQ(c.ci.quick_iterations, 10);
  EXPECT_EQ(c.ci.fuzz_iterations, 500);
}

TEST(ConfigLoader, ReadsAScriptBasedOpWithSchema) {
  const Config c = load_fixture();
  ASSERT_EQ(c.ops.size(), 4u);
  const OpConfig* op = c.find_op("matmul");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->reference.kind, Runnable::Kind::script);
  EXPECT_EQ(op->reference.script, kProject / "scripts" / "matmul_ref.py");
  EXPECT_EQ(op->reference.spelling, "scripts/matmul_ref.py");
  EXPECT_TRUE(op->reference.persistent);
  EXPECT_EQ(op->op_script.script, kProject / "kernels" / "matmul_op.py");
  EXPECT_EQ(op->execution_mode, ExecutionMode::script_based);
  EXPECT_EQ(op->dtypes, (std::vector{DType::float32, DType::float16}));
  EXPECT_EQ(op->invariants, std::vector{check::Invariant::shape_preserved});
  EXPECT_EQ(op->timeout_secs, 5.0);
  EXPECT_EQ(op->source, "kernels/matmul_op.py:3");
  EXPECT_EQ(op->layouts,
            (std::vector{tensor::Layout::contiguous, tensor::Layout::transposed, tensor::Layout::strided}));
  EXPECT_EQ(op->kwargs, nlohmann::json::parse(R"({"transpose_b": false, "alpha": 1.5, "tiles": [16, 32],
                                                 "block": {"m": 64, "n": 64}})"));
  EXPECT_EQ(op->location.line, 23);
  EXPECT_EQ(op->location.column, 1);

  ASSERT_TRUE(op->schema.has_value());
  const OpSchema& s = *op->schema;
  ASSERT_EQ(s.dims.size(), 3u);  // file order, not alphabetical
  EXPECT_EQ(s.dims[0].name, "M");
  EXPECT_EQ(s.dims[0].min, 1);
  EXPECT_EQ(s.dims[0].max, 256);
  EXPECT_TRUE(s.dims[0].candidates.empty());
  EXPECT_EQ(s.dims[1].name, "K");
  EXPECT_EQ(s.dims[1].candidates, (std::vector<std::int64_t>{1, 3, 127}));
  EXPECT_EQ(s.dims[2].name, "N");
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0].first, "a");
  EXPECT_EQ(s.inputs[0].second, (std::vector<DimRef>{"M", "K"}));
  EXPECT_EQ(s.inputs[1].second, (std::vector<DimRef>{"K", "N"}));
  EXPECT_EQ(s.output, (std::vector<DimRef>{"M", "N"}));

  EXPECT_EQ(op->input_names, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(op->inputs.size(), 2u);
  EXPECT_TRUE(op->inputs.at("a").shape.empty());  // the schema gives shapes
  EXPECT_DOUBLE_EQ(op->inputs.at("a").domain.lo, -1.0);
  EXPECT_DOUBLE_EQ(op->inputs.at("b").domain.lo, -2.0);
  EXPECT_DOUBLE_EQ(op->inputs.at("b").domain.hi, 2.5);
}

TEST(ConfigLoader, ResolvesCallablesAndDerivesInputs) {
  const Config c = load_fixture();
  const OpConfig* softmax = c.find_op("softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->reference.kind, Runnable::Kind::callable);
  EXPECT_EQ(softmax->reference.module, "fixture_pkg.refs");
  EXPECT_EQ(softmax->reference.function, "softmax_reference");
  // A dotted module names a function called like the op.
  EXPECT_EQ(softmax->op_script.kind, Runnable::Kind::callable);
  EXPECT_EQ(softmax->op_script.spelling, "fixture_pkg.ops:softmax");
  EXPECT_EQ(softmax->module, "fixture_pkg.ops");
  EXPECT_EQ(softmax->execution_mode, ExecutionMode::daemon_orchestrated);
  EXPECT_EQ(softmax->dtypes, c.validation.dtypes);
  // Without a schema, input names come from [ops.inputs] in file order; shapes default to [4, 64].
  EXPECT_EQ(softmax->input_names, (std::vector<std::string>{"logits", "mask"}));
  EXPECT_TRUE(softmax->inputs.at("logits").domain.any);
  EXPECT_EQ(softmax->inputs.at("logits").shape, (std::vector<DimRef>{std::int64_t{8}, std::int64_t{1000}}));
  EXPECT_EQ(softmax->inputs.at("mask").dtype, DType::bool_);
  EXPECT_EQ(softmax->inputs.at("mask").shape, (std::vector<DimRef>{std::int64_t{4}, std::int64_t{64}}));

  const OpConfig* layernorm = c.find_op("layernorm");
  ASSERT_NE(layernorm, nullptr);
  EXPECT_TRUE(layernorm->op_script.empty());  // client_side: the client runs the op
  EXPECT_EQ(layernorm->input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(layernorm->inputs.at("x").shape, (std::vector<DimRef>{std::int64_t{4}, std::int64_t{64}}));
  EXPECT_EQ(layernorm->layouts, std::vector{tensor::Layout::contiguous});

  const OpConfig* gather = c.find_op("gather");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->op_script.module, "fixture_pkg.ops");
  EXPECT_EQ(gather->op_script.function, "gather_rows");
  EXPECT_FALSE(gather->reference.persistent);
  EXPECT_EQ(gather->input_names, (std::vector<std::string>{"table", "index"}));
  EXPECT_EQ(gather->inputs.at("index").dtype, DType::int64);
  EXPECT_EQ(gather->inputs.at("index").shape, std::vector<DimRef>{std::int64_t{5}});
  EXPECT_EQ(gather->inputs.at("table").shape, (std::vector<DimRef>{std::int64_t{4}, std::int64_t{64}}));
  EXPECT_EQ(c.find_op("nope"), nullptr);
}

TEST(ConfigLoader, ReadsKernels) {
  const Config c = load_fixture();
  ASSERT_EQ(c.kernels.size(), 2u);
  const KernelConfig& k = c.kernels[0];
  EXPECT_EQ(k.name, "matmul_kernel");
  EXPECT_EQ(k.source, kProject / "kernels" / "matmul.ptx");
  EXPECT_EQ(k.reference, "scripts/matmul_ref.py");
  EXPECT_EQ(k.arch, "sm_90a");
  EXPECT_EQ(k.artifact_checks.max_registers, 64);
  EXPECT_EQ(k.artifact_checks.max_spills, 1);
  EXPECT_EQ(k.artifact_checks.max_local_memory_bytes, 512);
  EXPECT_EQ(k.artifact_checks.forbidden_instructions, (std::vector<std::string>{"LDG.E.SYS", "STG.E.SYS"}));
  EXPECT_EQ(k.artifact_checks.required_instructions, std::vector<std::string>{"HMMA"});
  const KernelConfig& plain = c.kernels[1];
  EXPECT_EQ(plain.arch, "sm_80");
  EXPECT_EQ(plain.artifact_checks.max_registers, 128);
  EXPECT_EQ(plain.artifact_checks.max_spills, 0);
}

TEST(ConfigLoader, ToleranceForFollowsPrecedence) {
  const Config c = load_fixture();
  const OpConfig& matmul = *c.find_op("matmul");
  // Op override: its rtol, and its missing atol from [validation.tolerances].
  EXPECT_EQ(c.tolerance_for(matmul, DType::float16), (check::ToleranceSpec{2e-2, 5e-2}));
  // [validation.tolerances] without an op override.
  EXPECT_EQ(c.tolerance_for(*c.find_op("softmax"), DType::float16), (check::ToleranceSpec{2e-2, 3e-2}));
  // Built-in defaults otherwise.
  EXPECT_EQ(c.tolerance_for(matmul, DType::float32), check::default_tolerance(DType::float32));
  EXPECT_EQ(c.tolerance_for(matmul, DType::bfloat16), check::default_tolerance(DType::bfloat16));
}

TEST(ConfigLoader, DefaultsForAMinimalFile) {
  auto c = load_config_text("[project]\nname = \"tiny\"\n", "gpuemu.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->project.version, "0.0.0");
  EXPECT_EQ(c->project.framework, "pytorch");
  EXPECT_EQ(c->project.numpy_bfloat16, NumpyBfloat16::ml_dtypes);  // absent: real bfloat16 (issue 18)
  EXPECT_EQ(c->validation.dtypes, std::vector{DType::float32});
  EXPECT_EQ(c->validation.seed, 0u);
  EXPECT_DOUBLE_EQ(c->validation.timeout, 60.0);
  EXPECT_EQ(c->validation.python, "python3");
  EXPECT_TRUE(c->ops.empty());
  EXPECT_TRUE(c->kernels.empty());
  EXPECT_TRUE(c->policies.fail_on_regression);
  EXPECT_DOUBLE_EQ(c->policies.max_error_growth, 2.0);
  EXPECT_EQ(c->ci.parallel_jobs, 1);
  EXPECT_EQ(c->digest.size(), 64u);
}

TEST(ConfigLoader, AcceptsLargeIntegerSeedsAndDtypeAliases) {
  auto c = load_config_text(
      "[project]\nname = \"s\"\n[validation]\nseed = 9223372036854775807\n"
      "dtypes = [\"fp16\", \"bf16\"]\n",
      "gpuemu.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->validation.seed, 9223372036854775807ULL);
  EXPECT_EQ(c->validation.dtypes, (std::vector{DType::float16, DType::bfloat16}));
}

TEST(FindProjectFile, WalksUpward) {
  auto found = find_project_file(kProject / "scripts");
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, kProject / "gpuemu.toml");
}

TEST(FindProjectFile, NamesWhereItLooked) {
  const gpuemu::testing::TempDir temp("gpuemu-config-no-project");
  const fs::path& dir = temp.path();
  auto found = find_project_file(dir);
  // A gpuemu.toml in / or /tmp would make this pass for the wrong reason.
  if (found) GTEST_SKIP() << "a gpuemu.toml exists above " << dir << ": " << *found;
  EXPECT_EQ(found.error().kind, ErrorKind::usage);
  EXPECT_EQ(found.error().message,
            "no gpuemu.toml in " + dir.string() +
                " or any directory above it\nhint: create one (see docs/configuration.md) "
                "or pass --config FILE");
}

}  // namespace
}  // namespace gpuemu::config
