// One op spec, many implementations (config/op_family.cpp): `implementations` expand into one
// OpConfig each named "op/implementation", `extends` inherits and overrides, and every mistake
// (cycles, unknown names, bad lists) is a diagnostic compared here in full.
#include <gtest/gtest.h>

#include "config/config_json.hpp"
#include "config/loader.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using namespace fixtures;

const std::string kRef = "reference = \"scripts/matmul_ref.py\"\n";

std::string load_error(const std::string& text) {
  auto c = load_config_text(text, kPath);
  if (c) return "accepted";
  EXPECT_EQ(c.error().kind, ErrorKind::config);
  return c.error().message;
}

TEST(Implementations, ExpandIntoOneOpEachSharingTheSpec) {
  const Config c = load_ok(kHead + "[validation]\ndtypes = [\"float32\", \"float16\"]\n" +
                           "[[ops]]\nname = \"softmax\"\n" + kRef +
                           "implementations = [\"kernels.softmax:v1\", \"kernels/matmul_op.py\",\n"
                           "  { name = \"fast\", op_script = \"kernels.softmax:v1\", source = \"k.py:3\" }]\n"
                           "invariants = [\"finite\"]\n"
                           "[ops.tolerances]\nfloat16 = { atol = 0.5 }\n");
  ASSERT_EQ(c.ops.size(), 3u);
  EXPECT_EQ(c.ops[0].name, "softmax/v1");
  EXPECT_EQ(c.ops[1].name, "softmax/matmul_op");
  EXPECT_EQ(c.ops[2].name, "softmax/fast");
  for (const OpConfig& op : c.ops) {
    EXPECT_EQ(op.spec, "softmax");
    EXPECT_EQ(op.dtypes.size(), 2u);
    EXPECT_EQ(op.invariants.size(), 1u);
    EXPECT_EQ(op.tolerances.at(tensor::DType::float16).atol, 0.5);
    EXPECT_EQ(op.reference.spelling, "scripts/matmul_ref.py");
  }
  EXPECT_EQ(c.ops[0].implementation, "v1");
  EXPECT_EQ(c.ops[0].op_script.kind, Runnable::Kind::callable);
  EXPECT_EQ(c.ops[0].op_script.function, "v1");
  EXPECT_EQ(c.ops[1].op_script.kind, Runnable::Kind::script);
  EXPECT_EQ(c.ops[2].source, "k.py:3");
  EXPECT_EQ(c.ops[0].source, "");
  // The value's position is kept for load-time checks after loading.
  EXPECT_EQ(c.ops[0].op_script.location.line, 8);
  EXPECT_EQ(c.ops[0].op_script.location.column, 20);
  EXPECT_EQ(to_json(c)["ops"][0]["implementation"], "v1");
}

TEST(Implementations, TheOnePerTableFormIsUnchanged) {
  const Config c = load_ok(kOp);
  ASSERT_EQ(c.ops.size(), 1u);
  EXPECT_EQ(c.ops[0].name, "mm");
  EXPECT_EQ(c.ops[0].spec, "mm");
  EXPECT_EQ(c.ops[0].implementation, "");
  EXPECT_EQ(c.ops[0].extends, "");
  // No new keys in the digest's JSON, so existing digests (and stored failures) still match.
  EXPECT_FALSE(to_json(c)["ops"][0].contains("implementation"));
  EXPECT_FALSE(to_json(c)["ops"][0].contains("spec"));
}

TEST(Extends, InheritsEverythingAndOverridesWhatItNames) {
  const Config c = load_ok(kHead +
                           "[[ops]]\nname = \"child\"\nextends = \"base\"\n"  // before its parent
                           "op_script = \"kernels.alt:softmax\"\n"
                           "dtypes = [\"float16\"]\n"
                           "[ops.tolerances]\nfloat16 = { rtol = 0.25 }\n"
                           "[ops.kwargs]\nblock = 64\n"
                           "[[ops]]\nname = \"base\"\n" +
                           kRef +
                           "implementations = [\"kernels.softmax:v1\", \"kernels.softmax:v2\"]\n"
                           "dtypes = [\"float32\", \"float16\"]\nlayouts = [\"contiguous\", \"strided\"]\n"
                           "[ops.tolerances]\nfloat16 = { atol = 0.5, rtol = 0.5 }\n"
                           "[ops.kwargs]\nblock = 32\nscale = 2\n"
                           "[ops.schema]\ndims = { M = [1, 8] }\ninputs = { x = [\"M\", 3] }\n");
  ASSERT_EQ(c.ops.size(), 3u);
  const OpConfig& child = c.ops[0];
  EXPECT_EQ(child.name, "child");
  EXPECT_EQ(child.extends, "base");
  EXPECT_EQ(child.implementation, "");  // naming op_script replaced the inherited implementations
  EXPECT_EQ(child.op_script.module, "kernels.alt");
  EXPECT_EQ(child.dtypes, std::vector<tensor::DType>{tensor::DType::float16});
  EXPECT_EQ(child.layouts.size(), 2u);
  EXPECT_EQ(child.tolerances.at(tensor::DType::float16).atol, 0.5);   // inherited field
  EXPECT_EQ(child.tolerances.at(tensor::DType::float16).rtol, 0.25);  // overridden field
  EXPECT_EQ(child.kwargs, nlohmann::json({{"block", 64}, {"scale", 2}}));
  ASSERT_TRUE(child.schema.has_value());
  EXPECT_EQ(child.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(c.ops[1].name, "base/v1");
  EXPECT_EQ(c.ops[2].name, "base/v2");
}

TEST(Extends, AChildThatNamesNoKernelKeepsThePartentsImplementations) {
  const Config c = load_ok(kHead + "[[ops]]\nname = \"softmax\"\n" + kRef +
                           "implementations = [\"kernels.softmax:v1\"]\n"
                           "[[ops]]\nname = \"softmax_wide\"\nextends = \"softmax\"\n"
                           "[ops.inputs.x]\nshape = [2, 4096]\n");
  ASSERT_EQ(c.ops.size(), 2u);
  EXPECT_EQ(c.ops[1].name, "softmax_wide/v1");
  EXPECT_EQ(c.ops[1].spec, "softmax_wide");
  EXPECT_EQ(c.ops[1].inputs.at("x").shape, (std::vector<DimRef>{std::int64_t{2}, std::int64_t{4096}}));
}

TEST(Extends, UnknownNameSuggestsTheClosest) {
  EXPECT_EQ(load_error(kOp + "[[ops]]\nname = \"mm2\"\nextends = \"nm\"\n"),
            kPath +
                ":9:11: error: op 'mm2' extends unknown op 'nm'\n"
                "extends = \"nm\"\n"
                "          ^\n"
                "hint: did you mean 'mm'?");
  EXPECT_EQ(load_error(kOp + "[[ops]]\nname = \"mm2\"\nextends = \"softmax\"\n"),
            kPath +
                ":9:11: error: op 'mm2' extends unknown op 'softmax'\n"
                "extends = \"softmax\"\n"
                "          ^\n"
                "hint: the ops in this file are 'mm' or 'mm2'");
}

TEST(Extends, CyclesAreNamed) {
  EXPECT_EQ(
      load_error(kHead + "[[ops]]\nname = \"a\"\nextends = \"b\"\n" +
                 "[[ops]]\nname = \"b\"\nextends = \"c\"\n" + "[[ops]]\nname = \"c\"\nextends = \"a\"\n"),
      kPath +
          ":11:11: error: 'extends' makes a cycle: a -> b -> c -> a\n"
          "extends = \"a\"\n"
          "          ^\n"
          "hint: an op cannot inherit from itself; remove 'extends' from one of them");
  EXPECT_EQ(load_error(kOp + "[[ops]]\nname = \"x\"\nextends = \"x\"\n"),
            kPath +
                ":9:11: error: 'extends' makes a cycle: x -> x\n"
                "extends = \"x\"\n"
                "          ^\n"
                "hint: an op cannot inherit from itself; remove 'extends' from one of them");
}

TEST(Implementations, ListMistakesPointAtTheEntry) {
  const std::string head = kHead + "[[ops]]\nname = \"softmax\"\n" + kRef;
  EXPECT_EQ(load_error(head + "implementations = [\"a.b:v1\", \"c.d:v1\"]\n"),
            kPath + ":6:30: error: implementation name 'v1' is used twice (first at " + kPath +
                ":6:20)\n"
                "implementations = [\"a.b:v1\", \"c.d:v1\"]\n"
                "                             ^\n"
                "hint: name one of them: { name = \"v1_2\", op_script = \"c.d:v1\" }");
  EXPECT_EQ(load_error(head + "implementations = []\n"),
            kPath +
                ":6:19: error: 'implementations' must not be empty\n"
                "implementations = []\n"
                "                  ^\n"
                "hint: list at least one, e.g. implementations = [\"kernels.softmax:v1\"]");
  EXPECT_EQ(load_error(head + "implementations = [\"a.b:v1\", 3]\n"),
            kPath +
                ":6:30: error: wrong type for 'implementations': expected an array of \"module:function\" or "
                "script strings, or of tables { name, op_script }, got an integer\n"
                "implementations = [\"a.b:v1\", 3]\n"
                "                             ^");
  EXPECT_EQ(load_error(head + "op_script = \"a.b:v0\"\nimplementations = [\"a.b:v1\"]\n"),
            kPath +
                ":7:19: error: op has both 'implementations' and 'op_script'\n"
                "implementations = [\"a.b:v1\"]\n"
                "                  ^\n"
                "hint: list the op_script as one of the implementations and remove 'op_script'");
  EXPECT_EQ(load_error(head + "implementations = [\"kernels/none.py\"]\n"),
            kPath + ":6:20: error: script not found: 'kernels/none.py' (looked for " +
                (kProject / "kernels" / "none.py").string() +
                ")\n"
                "implementations = [\"kernels/none.py\"]\n"
                "                   ^\n"
                "hint: paths are relative to " +
                kProject.string() + "; a Python callable is written \"package.module:function\"");
  EXPECT_EQ(
      load_error(head + "implementations = [{ name = \"v/2\", op_script = \"a.b:v2\" }]\n"),
      kPath +
          ":6:29: error: implementation name 'v/2' is not allowed\n"
          "implementations = [{ name = \"v/2\", op_script = \"a.b:v2\" }]\n"
          "                            ^\n"
          "hint: use letters, digits, '_', '-' and '.'; write { name = \"v2\", op_script = \"a.b:v2\" } to "
          "choose one");
  EXPECT_EQ(load_error(head + "implementations = [{ name = \"v2\", op = \"a.b:v2\" }]\n"),
            kPath +
                ":6:35: error: unknown key 'op' in [[ops]] 'softmax' implementation\n"
                "implementations = [{ name = \"v2\", op = \"a.b:v2\" }]\n"
                "                                  ^\n"
                "hint: allowed keys are 'name', 'op_script' or 'source'");
  EXPECT_EQ(
      load_error(head + "source = \"k.py:1\"\nimplementations = [\"a.b:v1\"]\n"),
      kPath +
          ":6:10: error: 'source' names one kernel, but op 'softmax' has several implementations\n"
          "source = \"k.py:1\"\n"
          "         ^\n"
          "hint: give each implementation its own source: { name = \"v1\", op_script = \"...\", source = "
          "\"file.py:12\" }, or leave it out: the source of a callable is inferred");
}

TEST(Implementations, OpNamesCannotHoldTheSeparator) {
  EXPECT_EQ(load_error(kHead + "[[ops]]\nname = \"soft/max\"\n" + kRef + "op_script = \"a.b:c\"\n"),
            kPath +
                ":4:8: error: op name 'soft/max' contains '/'\n"
                "name = \"soft/max\"\n"
                "       ^\n"
                "hint: '/' separates an op from its implementation in results (softmax/v2); rename the op");
}

}  // namespace
}  // namespace gpuemu::config
