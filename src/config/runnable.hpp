// Resolution of `reference` / `op_script` / `module` values into a Runnable: "pkg.mod:function"
// is a Python callable; anything else is a script path relative to the file that names it.
#pragma once

#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/diagnostic.hpp"
#include "config/table_reader.hpp"
#include "util/error.hpp"

namespace gpuemu::config {

bool is_identifier(std::string_view s);
// Identifiers separated by dots: "pkg.sub.mod".
bool is_dotted_module(std::string_view s);
// A dotted module, one colon, an identifier: "pkg.mod:function".
bool is_callable_spelling(std::string_view s);

// A callable or an existing script; `key` names the setting in messages ("reference").
Expected<Runnable> resolve_runnable(const Diagnostics& diag, const StringItem& item, std::string_view key);

}  // namespace gpuemu::config
