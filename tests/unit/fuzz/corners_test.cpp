// Tests for the corner cases (fuzz/corners.hpp): tests/vectors/corners.json (python/tests/test_vectors.py
// checks the Python side) pins the corners and a run's first seeds; a corner's seed replays its shape.
#include "fuzz/corners.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/case.hpp"

namespace gpuemu::fuzz {
namespace {

using nlohmann::json;

json load_vectors() {
  std::ifstream in(std::string(GPUEMU_SOURCE_DIR) + "/tests/vectors/corners.json");
  EXPECT_TRUE(in) << "missing tests/vectors/corners.json; run python3 tests/vectors/generate.py";
  return json::parse(in);
}

config::OpConfig op_of(const json& v) {
  config::OpConfig op;
  op.name = op.spec = v["name"].get<std::string>();
  for (const auto& d : v["dtypes"]) op.dtypes.push_back(*tensor::parse_dtype(d.get<std::string>()));
  config::OpSchema schema;
  for (const auto& d : v["dims"]) {
    schema.dims.push_back({d["name"].get<std::string>(), d["min"].get<std::int64_t>(),
                           d["max"].get<std::int64_t>(), d["candidates"].get<std::vector<std::int64_t>>(),
                           d["tiles"].get<std::vector<std::int64_t>>()});
  }
  for (const auto& [input, dims] : v["inputs"].items()) {
    std::vector<config::DimRef> refs;
    for (const auto& name : dims) refs.emplace_back(name.get<std::string>());
    schema.inputs.emplace_back(input, refs);
    op.input_names.push_back(input);
  }
  op.schema = schema;
  return op;
}

TEST(CornerVectors, CornersAndTheFirstSeedsOfARunMatchPython) {
  const json vectors = load_vectors();
  ASSERT_EQ(vectors["ops"].size(), 3u);
  for (const auto& v : vectors["ops"]) {
    const config::OpConfig op = op_of(v);
    const auto all = corners(op);
    ASSERT_EQ(all.size(), v["corners"].size()) << op.name;
    for (std::size_t k = 0; k < all.size(); ++k) {
      EXPECT_EQ(all[k].name, v["corners"][k]["name"].get<std::string>());
      EXPECT_EQ(all[k].dims, (v["corners"][k]["dims"].get<std::map<std::string, std::int64_t>>()));
    }
    for (const auto& stream : v["streams"]) {
      CaseFilter filter;
      if (!stream["dtype"].is_null()) filter.dtype = *tensor::parse_dtype(stream["dtype"].get<std::string>());
      const auto master = std::stoull(stream["master"].get<std::string>());
      for (std::size_t i = 0; i < stream["cases"].size(); ++i) {
        const json& expected = stream["cases"][i];
        const auto seed = run_case_seed(op, master, stream["stream"].get<std::string>(), i, filter);
        EXPECT_EQ(std::to_string(seed), expected["seed"].get<std::string>()) << op.name << " case " << i;
        EXPECT_EQ(is_corner_seed(seed), i < all.size());
        const auto c = generate_case(op, seed);
        ASSERT_TRUE(c.has_value()) << c.error().message;
        EXPECT_EQ(tensor::dtype_name(c->params.dtype), expected["params"][0].get<std::string>());
        for (const auto& [name, shape] : expected["shapes"].items())
          EXPECT_EQ(c->inputs.at(name).shape, shape.get<tensor::Shape>()) << op.name << " case " << i;
        EXPECT_EQ(c->corner, i < all.size() ? all[i].name : "");
      }
    }
  }
}

TEST(Corners, AnOpWithoutASchemaHasNoneAndARunStartsWithItsRandomSeeds) {
  config::OpConfig op;
  op.name = op.spec = "plain";
  op.dtypes = {tensor::DType::float32};
  op.input_names = {"x"};
  EXPECT_TRUE(corners(op).empty());
  EXPECT_EQ(run_case_seed(op, 5, "fuzz", 0, {}), case_seed(op, 5, "fuzz", 0, {}));
}

TEST(Corners, RandomCasesAfterTheCornersKeepTheSeedsTheyHadAndNeverLookLikeACorner) {
  const config::OpConfig op = op_of(load_vectors()["ops"][0]);
  const auto count = corners(op).size();
  for (std::uint64_t i = count; i < count + 50; ++i) {
    const auto seed = run_case_seed(op, 99, "fuzz", i, {});
    EXPECT_EQ(seed, case_seed(op, 99, "fuzz", i, {}));
    EXPECT_FALSE(is_corner_seed(seed));
  }
}

TEST(Corners, ValuesStaySeededWhileTheShapeStaysTheCorner) {
  const config::OpConfig op = op_of(load_vectors()["ops"][0]);
  const auto a = generate_case(op, corner_seed(op, 1, "fuzz", 2, {}));
  const auto b = generate_case(op, corner_seed(op, 2, "fuzz", 2, {}));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->dims, b->dims);
  EXPECT_NE(a->seed, b->seed);
  EXPECT_EQ(a->dims.at("K"), 1);
}

TEST(Corners, ASeedNamingACornerTheOpNoLongerHasIsAConfigErrorNamingTheOp) {
  const config::OpConfig op = op_of(load_vectors()["ops"][0]);
  const std::uint64_t seed = (kCornerTag << 40) | (std::uint64_t{200} << 32) | 7;
  const auto c = generate_case(op, seed);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().kind, ErrorKind::config);
  EXPECT_NE(c.error().message.find("names corner case 200 of op 'mm', which has 5 corner cases"),
            std::string::npos)
      << c.error().message;
}

TEST(Corners, EachDimAloneAtItsMinimumAndAt1AndDuplicatesOnce) {
  config::OpConfig op;
  op.name = op.spec = "r";
  config::OpSchema schema;
  schema.dims = {{"R", 0, 8, {}}, {"C", 2, 4096, {}}, {"F", 7, 7, {}}};
  schema.inputs = {{"x", {std::string("R"), std::string("C"), std::string("F")}}};
  op.schema = schema;
  const auto all = corners(op);
  std::vector<std::string> names;
  for (const auto& c : all) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "every dim at its minimum: R=0, C=2, F=7", "R alone at its minimum: R=0, C=33, F=7",
                       "R alone at 1: R=1, C=33, F=7", "C alone at its minimum: R=8, C=2, F=7",
                       // F has one size: "alone at its minimum" is the others' shape, still a case
                       // of its own (the Python mirror and tests/vectors/corners.json agree).
                       "F alone at its minimum: R=8, C=33, F=7"}));
}

}  // namespace
}  // namespace gpuemu::fuzz
