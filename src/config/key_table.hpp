// Every gpuemu.toml key, one row each: where it lives, its type, default and doc line. The allowed
// keys of each TableReader, the config digest's global sections and python/gpuemu/_config_keys.py
// derive from it; key_table_test fails on a row no parser reads (KeyReadLog, table_reader.hpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace gpuemu::config {

struct KeyRow {
  // The table the key is written in, as docs/configuration.md's headings name it: "validation",
  // "ops.inputs.NAME" (NAME: any input), "" for the top-level tables themselves.
  std::string_view section;
  std::string_view key;
  std::string_view type;           // as docs/configuration.md's Type column spells it
  std::string_view default_value;  // TOML text; "" when required, derived or without a literal default
  std::string_view doc;            // one line; docs/configuration.md has the full text
  // Its value in the config digest (config_json.cpp), for the keys of [project], [validation],
  // [policies] and [ci]; nullptr when the digest leaves it out (so digests of older configs stay)
  // or writes it per op or kernel.
  nlohmann::json (*digest)(const Config& config) = nullptr;
};

extern const std::span<const KeyRow> kKeyTable;

// The keys of `section` in table order: what TableReader::only_keys allows there.
std::vector<std::string_view> keys_of(std::string_view section);

// The text of python/gpuemu/_config_keys.py: every (section, key) with its default as a Python
// literal (None when it has none). scripts/gen-config-keys.sh writes it; a unit test keeps it current.
std::string python_keys_module();

}  // namespace gpuemu::config
