// Keeps docs/configuration.md honest: its complete example must load, with the files it names
// created in a scratch project, and give the documented derived values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "config/loader.hpp"

namespace gpuemu::config {
namespace {

namespace fs = std::filesystem;

std::string complete_example() {
  std::ifstream in(fs::path(GPUEMU_SOURCE_DIR) / "docs" / "configuration.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::size_t section = doc.find("## A complete example");
  const std::size_t start = doc.find("```toml\n", section);
  const std::size_t end = doc.find("```", start + 8);
  if (section == std::string::npos || start == std::string::npos || end == std::string::npos) return "";
  return doc.substr(start + 8, end - start - 8);
}

TEST(ConfigDocs, CompleteExampleLoads) {
  const std::string example = complete_example();
  ASSERT_FALSE(example.empty()) << "docs/configuration.md has no complete example";
  const gpuemu::testing::TempDir temp("gpuemu-config-docs-example");
  const fs::path& dir = temp.path();
  for (const char* sub : {"kernels", "refs", "src"}) fs::create_directories(dir / sub);
  for (const char* file : {"kernels/matmul.py", "refs/matmul_ref.py", "kernels/matmul.ptx"}) {
    std::ofstream(dir / file) << "\n";
  }
  std::ofstream(dir / "gpuemu.toml") << example;

  auto c = load_config(ConfigSources{dir / "gpuemu.toml", std::nullopt, std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->ops.size(), 3u);
  EXPECT_EQ(c->find_op("softmax")->op_script.spelling, "my_project.ops:softmax");
  const OpConfig& layernorm = *c->find_op("layernorm");
  EXPECT_EQ(layernorm.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(layernorm.inputs.at("x").shape,
            (std::vector<DimRef>(kDefaultInputShape.begin(), kDefaultInputShape.end())));
  EXPECT_EQ(c->kernels.size(), 1u);
  EXPECT_EQ(c->validation.python_path, std::vector<fs::path>{dir / "src"});
}

}  // namespace
}  // namespace gpuemu::config
