// Keeps config::frameworks() (src/config/framework.cpp) the one list of framework names: Python's
// FRAMEWORKS (which the Python package and its tests derive the rest from: the pip extras, the
// tensor owners), the adapter modules, the result schema and the docs each name exactly its frameworks.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace gpuemu::config::framework_names {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = GPUEMU_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (Framework f : frameworks()) out.emplace_back(framework_name(f));
  return out;
}

// The names joined as `sep` joins them, the last with `last` ("`numpy`, `pytorch`, `jax` or `tensorflow`").
std::string joined(std::string_view quote, std::string_view sep, std::string_view last) {
  const auto all = names();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? last : sep;
    out += std::string(quote) + all[i] + std::string(quote);
  }
  return out;
}

// The double-quoted strings of the first `VARIABLE = (...)` assignment in a Python file.
std::vector<std::string> python_tuple(const fs::path& file, const std::string& variable) {
  const std::string text = read_text(file);
  std::smatch tuple;
  if (!std::regex_search(text, tuple, std::regex("\\n" + variable + " = \\(([^)]*)\\)"))) return {};
  std::vector<std::string> out;
  const std::string body = tuple[1];
  const std::regex string("\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), string); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

const std::string kStale = " names other frameworks than src/config/framework.cpp: keep the two lists equal";

TEST(FrameworkNames, EveryFrameworkIsListedOnceInTheEnumsOrderAndRoundTrips) {
  std::set<std::string> seen;
  int number = 0;
  for (Framework f : frameworks()) {
    EXPECT_EQ(static_cast<int>(f), number++);
    EXPECT_EQ(parse_framework(framework_name(f)), f);
    EXPECT_TRUE(seen.insert(std::string(framework_name(f))).second) << framework_name(f);
  }
  EXPECT_EQ(parse_framework("torch"), std::nullopt);
}

TEST(FrameworkNames, PythonFrameworksIsTheList) {
  const fs::path settings = kSource / "python/gpuemu/frameworks/_settings.py";
  EXPECT_EQ(python_tuple(settings, "FRAMEWORKS"), names()) << settings << kStale;
}

// Each framework has its adapter gpuemu/frameworks/NAME.py saying NAME = "NAME", and no other
// module of that package is an adapter (a top-level NAME).
TEST(FrameworkNames, EachFrameworkHasItsAdapterModuleAndNoOtherModuleIsOne) {
  std::vector<std::string> adapters;
  const std::regex name_line("\\nNAME = \"([^\"]*)\"");
  for (const auto& entry : fs::directory_iterator(kSource / "python/gpuemu/frameworks")) {
    if (entry.path().extension() != ".py") continue;
    const std::string text = "\n" + read_text(entry.path());
    std::smatch name;
    if (!std::regex_search(text, name, name_line)) continue;
    EXPECT_EQ(name[1], entry.path().stem().string()) << entry.path();
    adapters.push_back(name[1]);
  }
  std::sort(adapters.begin(), adapters.end());
  auto expected = names();
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(adapters, expected) << "the adapter modules of python/gpuemu/frameworks/" << kStale;
}

TEST(FrameworkNames, ResultSchemaRuntimeFrameworkIsTheList) {
  const auto schema = nlohmann::json::parse(read_text(kSource / "tests/schemas/result-v1.schema.json"));
  const auto& runtime = schema["$defs"]["runtime"];
  ASSERT_TRUE(runtime.is_object()) << "result-v1.schema.json has no $defs.runtime";
  EXPECT_EQ(runtime["properties"]["framework"]["enum"].get<std::vector<std::string>>(), names())
      << "runtime.framework of tests/schemas/result-v1.schema.json" << kStale;
}

TEST(FrameworkNames, DocsAndTheWorkersUsageNameTheList) {
  // Each `framework` row of docs/configuration.md's key tables ([project] and [[ops]]).
  const std::string configuration = read_text(kSource / "docs/configuration.md");
  const std::regex row("\\n\\| `framework` \\|[^\\n]*");
  int rows = 0;
  for (auto it = std::sregex_iterator(configuration.begin(), configuration.end(), row);
       it != std::sregex_iterator(); ++it, ++rows) {
    EXPECT_NE(it->str().find(joined("`", ", ", " or ")), std::string::npos)
        << "docs/configuration.md:" << it->str() << "\n should list " << joined("`", ", ", " or ");
  }
  EXPECT_EQ(rows, 2) << "docs/configuration.md should have a `framework` row for [project] and [[ops]]";
  // The worker's flags, as docs/worker-protocol.md and the worker's own docstring give them.
  const std::string flag = "--framework " + joined("", "|", "|");
  for (const char* file : {"docs/worker-protocol.md", "python/gpuemu/worker.py"})
    EXPECT_NE(read_text(kSource / file).find(flag), std::string::npos) << file << " should say " << flag;
  // The value of gpuemu.frameworks.FRAMEWORKS, as docs/python-api.md's Frameworks table gives it.
  const std::string tuple = "`(" + joined("\"", ", ", ", ") + ")`";
  EXPECT_NE(read_text(kSource / "docs/python-api.md").find("| `frameworks.FRAMEWORKS`, "), std::string::npos);
  EXPECT_NE(read_text(kSource / "docs/python-api.md").find(tuple), std::string::npos)
      << "docs/python-api.md should give FRAMEWORKS as " << tuple;
}

}  // namespace
}  // namespace gpuemu::config::framework_names
