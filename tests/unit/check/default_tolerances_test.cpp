// Keeps check::default_tolerance (src/check/tolerance.cpp) the one source of the per-dtype default
// tolerances: Python's DEFAULT_TOLERANCES and docs/configuration.md's table each give exactly its values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

#include "check/tolerance.hpp"
#include "tensor/dtype.hpp"

namespace gpuemu::check::default_tolerances {
namespace {

namespace fs = std::filesystem;
using tensor::DType;
using Defaults = std::map<std::string, std::pair<double, double>>;  // dtype -> (atol, rtol)

const fs::path kSource = GPUEMU_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every dtype whose default is not exact, from the C++ function itself.
Defaults cpp_defaults() {
  Defaults out;
  for (auto name : tensor::all_dtype_names()) {
    const ToleranceSpec spec = default_tolerance(*tensor::parse_dtype(name));
    if (spec.atol != 0 || spec.rtol != 0) out[std::string(name)] = {spec.atol, spec.rtol};
  }
  return out;
}

const std::string kStale = " gives other defaults than check::default_tolerance (src/check/tolerance.cpp)";

TEST(DefaultTolerances, OnlyFloatingDtypesHaveOneAndTheRestCompareExactly) {
  for (auto name : tensor::all_dtype_names()) {
    const DType dtype = *tensor::parse_dtype(name);
    const ToleranceSpec spec = default_tolerance(dtype);
    EXPECT_EQ(tensor::is_floating(dtype), spec.atol > 0 && spec.rtol > 0) << name;
    if (!tensor::is_floating(dtype)) {
      EXPECT_EQ(spec, (ToleranceSpec{0, 0})) << name;
    }
  }
}

TEST(DefaultTolerances, PythonDefaultTolerancesIsTheTable) {
  const fs::path file = kSource / "python/gpuemu/_internal/core/tolerance.py";
  const std::string text = read_text(file);
  std::smatch table;
  ASSERT_TRUE(std::regex_search(text, table, std::regex("\\nDEFAULT_TOLERANCES = \\{([^}]*)\\}")))
      << file << " has no DEFAULT_TOLERANCES = {...}";
  const std::string body = table[1];
  const std::regex row("\"(\\w+)\": \\(([^,]+), ([^)]+)\\)");
  Defaults python;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), row); it != std::sregex_iterator(); ++it)
    python[(*it)[1]] = {std::stod((*it)[2]), std::stod((*it)[3])};
  EXPECT_EQ(python, cpp_defaults()) << file << kStale;
}

// The table under "takes the built-in default for that dtype": a row per group of dtypes with equal
// defaults, and one "integers, bool | exact | exact" row.
TEST(DefaultTolerances, ConfigurationDocsTableIsTheTable) {
  const std::string doc = read_text(kSource / "docs/configuration.md");
  const std::size_t start = doc.find("takes the built-in default for that dtype:");
  ASSERT_NE(start, std::string::npos) << "docs/configuration.md lost its default tolerance table";
  const std::size_t end = doc.find("\n\n", doc.find("| dtype | atol | rtol |", start));
  const std::string table = doc.substr(start, end - start);
  const std::regex row("\\n\\| ([a-z0-9, ]+) \\| ([0-9.e-]+) \\| ([0-9.e-]+) \\|");
  Defaults docs;
  for (auto it = std::sregex_iterator(table.begin(), table.end(), row); it != std::sregex_iterator(); ++it) {
    std::stringstream names((*it)[1]);
    for (std::string name; std::getline(names >> std::ws, name, ',');)
      docs[name] = {std::stod((*it)[2]), std::stod((*it)[3])};
  }
  EXPECT_EQ(docs, cpp_defaults()) << "docs/configuration.md" << kStale;
  EXPECT_NE(table.find("\n| integers, bool | exact | exact |"), std::string::npos);
}

}  // namespace
}  // namespace gpuemu::check::default_tolerances
