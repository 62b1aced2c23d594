// The extends/implementations rule as data: tests/vectors/op_family.json holds gpuemu.toml texts and
// the ops the C++ loader (the rule's one source) makes of them; Python and the VS Code extension check theirs
// against it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const fs::path kVectors = fs::path(GPUEMU_SOURCE_DIR) / "tests" / "vectors" / "op_family.json";

Json read_vectors() {
  std::ifstream in(kVectors);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str(), nullptr, false);
}

// Each op the loader makes, as the mirrors can compute it: its result name, [[ops]] name and
// implementation, the kernel's spelling (module alone becomes "module:function") and whether it is
// a script or a callable, the same of the reference, and the dtypes.
Json ops_of(const Config& config) {
  Json out = Json::array();
  for (const OpConfig& op : config.ops) {
    Json dtypes = Json::array();
    for (tensor::DType d : op.dtypes) dtypes.push_back(std::string(tensor::dtype_name(d)));
    out.push_back({{"name", op.name},
                   {"spec", op.spec},
                   {"implementation", op.implementation},
                   {"kernel", op.op_script.spelling},
                   {"kernel_is_script", op.op_script.kind == Runnable::Kind::script},
                   {"reference", op.reference.spelling},
                   {"reference_is_script", op.reference.kind == Runnable::Kind::script},
                   {"dtypes", dtypes}});
  }
  return out;
}

// tests/vectors/op_family.json's `ops` are what the loader makes of each case's text; with
// GPUEMU_WRITE_OP_FAMILY=1 (scripts/gen-op-family-vectors.sh) this test writes them first.
TEST(OpFamilyVectors, TheVectorsAreWhatTheLoaderMakes) {
  Json vectors = read_vectors();
  ASSERT_TRUE(vectors.is_object() && vectors.contains("cases")) << kVectors << " does not parse";
  Json expected = vectors;
  for (Json& c : expected["cases"]) {
    std::string text;
    for (const auto& line : c.at("toml")) text += line.get<std::string>() + "\n";
    auto config = load_config_text(text, fixtures::kPath);
    ASSERT_TRUE(config) << c.at("name") << ": " << config.error().message;
    c["ops"] = ops_of(*config);
  }
  if (const char* write = std::getenv("GPUEMU_WRITE_OP_FAMILY");
      write != nullptr && std::string(write) == "1") {
    std::ofstream(kVectors) << expected.dump(2) << "\n";
    vectors = read_vectors();
  }
  ASSERT_EQ(vectors["cases"].size(), expected["cases"].size());
  for (std::size_t i = 0; i < expected["cases"].size(); ++i) {
    EXPECT_EQ(vectors["cases"][i]["ops"].dump(2), expected["cases"][i]["ops"].dump(2))
        << kVectors << " is stale at case '" << expected["cases"][i]["name"].get<std::string>()
        << "': run scripts/gen-op-family-vectors.sh after changing the rule (src/config/op_family.cpp, "
           "parse_ops.cpp), then make the Python and VS Code mirrors pass again";
  }
}

// The vectors cover each part of the rule, so a mirror checked against them meets it.
TEST(OpFamilyVectors, TheCasesCoverTheRule) {
  const Json vectors = read_vectors();
  ASSERT_TRUE(vectors.is_object());
  std::string all;
  for (const auto& c : vectors["cases"])
    for (const auto& line : c["toml"]) all += line.get<std::string>() + "\n";
  for (const char* part : {"implementations = [", "{ name = ", "extends = ", "module = ", "op_script = "})
    EXPECT_NE(all.find(part), std::string::npos) << "no case of " << kVectors << " writes " << part;
}

}  // namespace
}  // namespace gpuemu::config
