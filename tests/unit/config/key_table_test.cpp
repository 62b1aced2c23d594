// Keeps the key table (config/key_table.hpp) the one place a key is declared: each row is read by a
// parser, docs/configuration.md names every key in its section with the table's default, defaults
// match the code, Python's copy is current.
#include "config/key_table.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "config/config_json.hpp"
#include "config/loader.hpp"
#include "config/table_reader.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& configuration_md() {
  static const std::string text = read_text(fs::path(GPUEMU_SOURCE_DIR) / "docs" / "configuration.md");
  return text;
}

// The part of docs/configuration.md under the heading of `section` ("## [validation]", "## [[ops]]",
// "### [ops.inputs.NAME]") up to the next heading of the same or a higher level; a section without a
// heading of its own (ops.implementations) is documented in its parent's. Empty when there is none.
std::string doc_region(std::string section) {
  const std::string& doc = configuration_md();
  while (!section.empty()) {
    for (const std::string& title : {"[" + section + "]", "[[" + section + "]]"}) {
      for (const std::string level : {"\n## ", "\n### "}) {
        const std::size_t at = doc.find(level + title + "\n");
        if (at == std::string::npos) continue;
        std::size_t end = doc.find("\n## ", at + 1);
        if (level == "\n### ") end = std::min(end, doc.find("\n### ", at + 1));
        return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
      }
    }
    const std::size_t dot = section.rfind('.');
    section = dot == std::string::npos ? "" : section.substr(0, dot);
  }
  return "";
}

TEST(KeyTable, EachSectionNamesAKeyOnce) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const KeyRow& row : kKeyTable) {
    EXPECT_TRUE(seen.insert({row.section, row.key}).second)
        << "[" << row.section << "] " << row.key << " twice";
    EXPECT_FALSE(row.type.empty()) << row.key;
    EXPECT_FALSE(row.doc.empty()) << row.key;
  }
  EXPECT_EQ(keys_of("ci"), (std::vector<std::string_view>{"quick_dtypes", "thorough_timeout", "parallel_jobs",
                                                          "quick_iterations", "fuzz_iterations"}));
}

std::string section_name(std::string_view section) {
  return section.empty() ? "the top level" : "[" + std::string(section) + "]";
}

// Each row is bound to its read: loading a config that sets every key, the parsers must ask for each
// row's key (a row no parser reads is a key gpuemu.toml accepts and silently ignores) and for no key
// without a row.
TEST(KeyTable, EveryRowIsReadByAParser) {
  const fs::path file = fixtures::kProject / "every_key.toml";
  const KeyReadLog log;
  const auto config = load_config_text(read_text(file), file);
  ASSERT_TRUE(config) << config.error().message;
  std::set<std::pair<std::string, std::string>> rows;
  for (const KeyRow& row : kKeyTable) {
    const std::pair<std::string, std::string> id{row.section, row.key};
    rows.insert(id);
    const auto read = log.reads().find(id);
    if (read == log.reads().end()) {
      ADD_FAILURE() << section_name(row.section) << " " << row.key
                    << ": no parser reads this row's key, so gpuemu.toml would accept it and ignore it; read "
                       "it in its section's parser (src/config) through a TableReader, or remove the row";
      continue;
    }
    EXPECT_TRUE(read->second.present) << file << " does not set " << section_name(row.section) << " "
                                      << row.key << ": set it there, so that its read is checked";
  }
  for (const auto& [id, read] : log.reads()) {
    EXPECT_TRUE(rows.contains(id)) << "a parser reads " << section_name(id.first) << " " << id.second
                                   << ", which has no row in src/config/key_table.cpp";
  }
}

TEST(KeyTable, ConfigurationMdNamesEveryKeyInItsSection) {
  for (const KeyRow& row : kKeyTable) {
    if (row.section.empty()) {
      const std::string key(row.key);
      EXPECT_TRUE(configuration_md().find("\n## [" + key + "]\n") != std::string::npos ||
                  configuration_md().find("\n## [[" + key + "]]\n") != std::string::npos)
          << "docs/configuration.md has no heading for the table [" << key << "]";
      continue;
    }
    const std::string region = doc_region(std::string(row.section));
    ASSERT_FALSE(region.empty()) << "docs/configuration.md has no heading for [" << row.section << "]";
    EXPECT_NE(region.find("`" + std::string(row.key) + "`"), std::string::npos)
        << "docs/configuration.md does not name `" << row.key << "` under [" << row.section << "]";
  }
}

TEST(KeyTable, ConfigurationMdGivesTheTablesDefaults) {
  for (const KeyRow& row : kKeyTable) {
    if (row.default_value.empty()) continue;
    const std::string region = doc_region(std::string(row.section));
    const std::string cell = "| `" + std::string(row.key) + "` | ";
    const std::size_t at = region.find(cell);
    ASSERT_NE(at, std::string::npos) << "no row for `" << row.key << "` under [" << row.section << "]";
    const std::size_t type_end = region.find(" | ", at + cell.size());
    ASSERT_NE(type_end, std::string::npos);
    EXPECT_EQ(region.substr(type_end + 3, row.default_value.size() + 2),
              "`" + std::string(row.default_value) + "`")
        << "[" << row.section << "] " << row.key << ": the table's default is " << row.default_value;
  }
}

// `key = default` for each row of `section` that has a default.
std::string default_lines(std::string_view section) {
  std::string out;
  for (const KeyRow& row : kKeyTable) {
    if (row.section == section && !row.default_value.empty())
      out += std::string(row.key) + " = " + std::string(row.default_value) + "\n";
  }
  return out;
}

// Writing each global key's default out must load to the same Config as leaving it out.
TEST(KeyTable, WritingEveryGlobalDefaultChangesNothing) {
  const std::string text = "[project]\nname = \"p\"\n";
  std::string written = text + default_lines("project");
  for (const std::string_view section : {"validation", "policies", "ci"})
    written += "[" + std::string(section) + "]\n" + default_lines(section);
  const Config bare = fixtures::load_ok(text);
  const Config full = fixtures::load_ok(written);
  EXPECT_EQ(to_json(bare).dump(2), to_json(full).dump(2)) << written;
  EXPECT_EQ(bare.validation.sanitize, full.validation.sanitize);  // the one global key not in the digest
}

// The same for an op's and a kernel's keys and their nested tables. [project] framework stays
// unwritten here: written, even as its default, it sets the framework of every op (configuration.md).
TEST(KeyTable, WritingEveryOpAndKernelDefaultChangesNothing) {
  const std::string kernel = "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\n";
  const std::string bare_text = fixtures::kOp + kernel;
  const std::string written = fixtures::kOp + default_lines("ops") + "[ops.inputs.x]\n" +
                              default_lines("ops.inputs.NAME") + kernel + default_lines("kernels") +
                              "[kernels.artifact_checks]\n" + default_lines("kernels.artifact_checks");
  const Config bare = fixtures::load_ok(bare_text);
  const Config full = fixtures::load_ok(written);
  EXPECT_EQ(to_json(bare).dump(2), to_json(full).dump(2)) << written;
  // Every section with a default is written by one of the two tests.
  for (const KeyRow& row : kKeyTable) {
    if (row.default_value.empty()) continue;
    EXPECT_TRUE(std::set<std::string_view>({"project", "validation", "policies", "ci", "ops",
                                            "ops.inputs.NAME", "kernels", "kernels.artifact_checks"})
                    .contains(row.section))
        << section_name(row.section) << " " << row.key
        << " has a default no WritingEvery...Default test writes";
  }
}

TEST(KeyTable, TheDigestHasEveryGlobalKeyTheTableWrites) {
  const Config config = fixtures::load_ok(fixtures::kOp);
  const nlohmann::json json = to_json(config);
  for (const std::string section : {"project", "validation", "policies", "ci"}) {
    std::set<std::string> expected;
    for (const KeyRow& row : kKeyTable) {
      if (row.section == section && row.digest != nullptr) expected.insert(std::string(row.key));
    }
    std::set<std::string> actual;
    for (const auto& [key, value] : json.at(section).items()) actual.insert(key);
    EXPECT_EQ(actual, expected) << section;
  }
}

// python/gpuemu/_config_keys.py is python_keys_module() as of the last scripts/gen-config-keys.sh.
TEST(KeyTable, PythonKeysModuleIsCurrent) {
  const fs::path file = fs::path(GPUEMU_SOURCE_DIR) / "python" / "gpuemu" / "_config_keys.py";
  if (const char* write = std::getenv("GPUEMU_WRITE_CONFIG_KEYS");
      write != nullptr && std::string(write) == "1")
    std::ofstream(file) << python_keys_module();
  EXPECT_EQ(read_text(file), python_keys_module())
      << file << " is stale: run scripts/gen-config-keys.sh after editing src/config/key_table.cpp";
}

}  // namespace
}  // namespace gpuemu::config
