// engine::declare_output_hint: the `output = [...]` line named with the case's dims (a size no dim
// has stays a number), and for an op without a schema the whole [ops.schema] pinning its shapes.
#include "engine/output_hint.hpp"

#include <gtest/gtest.h>

namespace gpuemu::engine {
namespace {

fuzz::Case case_of(const std::map<std::string, tensor::Shape>& shapes,
                   std::map<std::string, std::int64_t> dims) {
  fuzz::Case c;
  c.dims = std::move(dims);
  for (const auto& [name, shape] : shapes) {
    c.input_order.push_back(name);
    c.inputs[name] = tensor::Tensor{tensor::DType::float32, shape, {}, {}};
  }
  return c;
}

TEST(OutputHint, NamesTheSchemaDimsOfTheCase) {
  config::OpConfig op;
  op.name = "rowsum";
  op.schema = config::OpSchema{};
  op.schema->inputs = {{"x", {std::string("M"), std::string("N")}}};
  const auto c = case_of({{"x", {3, 10}}}, {{"M", 3}, {"N", 10}});
  EXPECT_EQ(declare_output_hint(op, c, {3}),
            "if [3] is the right shape (op 'rowsum' reduces or reshapes), declare it: add output = [\"M\"] "
            "under the op's [ops.schema] in gpuemu.toml");
  EXPECT_NE(declare_output_hint(op, c, {10, 7}).find("output = [\"N\", 7]"), std::string::npos);
  // A client's case has no dims: they are read off its inputs.
  EXPECT_NE(declare_output_hint(op, case_of({{"x", {5, 2}}}, {}), {5}).find("output = [\"M\"]"),
            std::string::npos);
}

TEST(OutputHint, AnOpWithoutASchemaGetsTheWholeSchema) {
  config::OpConfig op;
  op.name = "flat";
  const auto c = case_of({{"x", {4, 64}}}, {});
  EXPECT_EQ(
      declare_output_hint(op, c, {4}),
      "if [4] is the right shape (op 'flat' reduces or reshapes), declare it in gpuemu.toml after the op's "
      "[[ops]] lines:\n[ops.schema]\ndims = { D0 = { candidates = [4] }, D1 = { candidates = [64] } }\n"
      "inputs = { x = [\"D0\", \"D1\"] }\noutput = [\"D0\"]");
}

}  // namespace
}  // namespace gpuemu::engine
