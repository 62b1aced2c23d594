// config::undeclared_input_shapes on loaded configs: two inputs with no shape anywhere are refused
// (at the [[ops]] table, with the schema to write); a declared shape on one input, a schema, one
// input, or a child op that inherits a declared shape are not.
#include "config/default_shapes.hpp"

#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using fixtures::kOp;
using fixtures::load_ok;

TEST(DefaultShapes, TwoInputsWithNoShapeAreRefusedWithTheSchemaToWrite) {
  const Config c = load_ok(kOp + "input_names = [\"a\", \"b\"]\n");
  const auto problem = undeclared_input_shapes(*c.find_op("mm"));
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find(":3:1: error: op 'mm' has no [ops.schema], so each of its inputs (a, b) takes the "
                          "default shape [4, 64]"),
            std::string::npos)
      << *problem;
  EXPECT_NE(problem->find("[ops.schema]\ndims = { M = [1, 64], K = [1, 64], N = [1, 64] }\n"
                          "inputs = { a = [\"M\", \"K\"], b = [\"K\", \"N\"] }\noutput = [\"M\", \"N\"]\n"),
            std::string::npos)
      << *problem;
  EXPECT_NE(problem->find("[ops.inputs.a] shape = [4, 64]"), std::string::npos) << *problem;
  // Three inputs: a chain of D0 ... D3.
  const Config three = load_ok(kOp + "input_names = [\"q\", \"k\", \"v\"]\n");
  const auto chain = undeclared_input_shapes(*three.find_op("mm"));
  ASSERT_TRUE(chain);
  EXPECT_NE(chain->find("inputs = { q = [\"D0\", \"D1\"], k = [\"D1\", \"D2\"], v = [\"D2\", \"D3\"] }"),
            std::string::npos)
      << *chain;
}

TEST(DefaultShapes, ADeclaredShapeASchemaOrOneInputIsAccepted) {
  for (const std::string& op : {
           kOp + "input_names = [\"a\", \"b\"]\n[ops.inputs.b]\nshape = [64, 8]\n",
           kOp + "[ops.schema]\ndims = { M = [1, 8], K = [1, 8], N = [1, 8] }\n"
                 "inputs = { a = [\"M\", \"K\"], b = [\"K\", \"N\"] }\n",
           kOp + "input_names = [\"x\"]\n",
           kOp,
           // The child inherits the parent's declared shape of `a`.
           kOp + "input_names = [\"a\", \"b\"]\n[ops.inputs.a]\nshape = [4, 8]\n[[ops]]\nname = \"child\"\n"
                 "extends = \"mm\"\n",
       }) {
    const Config c = load_ok(op);
    for (const auto& loaded : c.ops) EXPECT_FALSE(undeclared_input_shapes(loaded)) << op;
  }
}

}  // namespace
}  // namespace gpuemu::config
