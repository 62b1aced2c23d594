// A case record (`reproduce`'s document, a daemon reply's case) decoded by result.json's reader: a
// failures[] entry whose kind may also be "none", the case passed (docs/result-json.md, "failure").
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "result/document.hpp"
#include "util/error.hpp"

namespace gpuemu::result {

// Validates and decodes `record` as result::case_to_json writes it; errors name `name` and the field.
Expected<FailureEntry> case_from_json(const nlohmann::json& record, std::string_view name);

}  // namespace gpuemu::result
