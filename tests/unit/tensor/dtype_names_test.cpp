// Keeps src/tensor/dtype.cpp the one list of dtype names: Python's DTYPE_NAMES (which the adapters,
// the fuzz generators and the wire codec derive theirs from), its aliases, and the docs' lists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/dtype.hpp"

namespace gpuemu::tensor {
namespace {

const std::filesystem::path kDtypesPy =
    std::filesystem::path(GPUEMU_SOURCE_DIR) / "python" / "gpuemu" / "_internal" / "core" / "dtypes.py";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The double-quoted strings between `open` and the first `close` after it.
std::vector<std::string> quoted_after(const std::string& text, const std::string& open, char close) {
  const std::size_t start = text.find(open);
  if (start == std::string::npos) return {};
  const std::size_t end = text.find(close, start + open.size());
  const std::string body = text.substr(start + open.size(), end - start - open.size());
  std::vector<std::string> out;
  const std::regex string("\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), string); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

TEST(DtypeNames, PythonDtypeNamesIsTheListInTheEnumsOrder) {
  std::vector<std::string> names;
  for (auto name : all_dtype_names()) names.emplace_back(name);
  EXPECT_EQ(quoted_after(read_text(kDtypesPy), "\nDTYPE_NAMES = (", ')'), names)
      << kDtypesPy << " names other dtypes than src/tensor/dtype.cpp: keep the two lists equal";
}

TEST(DtypeNames, EveryPythonAliasMeansInCppWhatItMeansInPython) {
  const auto pairs = quoted_after(read_text(kDtypesPy), "\n_ALIASES = {", '}');
  ASSERT_FALSE(pairs.empty()) << kDtypesPy << " has no _ALIASES";
  ASSERT_EQ(pairs.size() % 2, 0u);
  for (std::size_t i = 0; i < pairs.size(); i += 2) {
    const auto dtype = parse_dtype(pairs[i]);
    ASSERT_TRUE(dtype.has_value()) << "alias '" << pairs[i] << "' of " << kDtypesPy << " is unknown to C++";
    EXPECT_EQ(dtype_name(*dtype), pairs[i + 1]) << "alias '" << pairs[i] << "'";
  }
}

// The docs that list the dtypes list every one, in the enum's order: "`float16`, `bfloat16`, ... `bool`".
TEST(DtypeNames, TheDocsListEveryDtype) {
  std::string list;
  for (auto name : all_dtype_names()) list += (list.empty() ? "`" : ", `") + std::string(name) + "`";
  for (const char* doc : {"docs/configuration.md", "docs/protocol.md", "docs/script-protocol.md"}) {
    const std::string text = std::regex_replace(read_text(std::filesystem::path(GPUEMU_SOURCE_DIR) / doc),
                                                std::regex("\\s+"), " ");
    EXPECT_NE(text.find(list), std::string::npos) << doc << " should list the dtypes as " << list;
  }
}

}  // namespace
}  // namespace gpuemu::tensor
