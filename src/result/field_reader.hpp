// Typed reads of JSON fields for gpuemu's documents, and the (op, dtype) entry that result.json's
// ops[].dtypes[] and a baseline file's entries[] share: one decoder, each document its own words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/document.hpp"

namespace gpuemu::result {

// The JSON type a field must have. A number may also be "NaN", "Infinity" or "-Infinity"
// (decode_number); a seed is a decimal string of an unsigned 64-bit value.
enum class FieldType { string, boolean, count, number, array, object, seed, integer };

// As result.json's reader words it: "a string", "a non-negative integer", ...
std::string_view field_type_name(FieldType type);

// The first thing wrong in a document being read. `what` is result.json's wording ("is missing",
// "should be a string, found 7"); `expected` is set when the field is missing or has another JSON
// type, so a reader of another document can word that its own way (engine/baseline_document.cpp).
struct FieldProblem {
  std::string path;  // e.g. "ops[3].failures[0].seed", "entries[0].total"
  std::string what;
  std::optional<FieldType> expected;
  bool missing = false;
};

// Walks a document once, decoding as it checks; the first problem found is kept with its JSON path.
// After a problem, the values read are meaningless and thrown away by the caller.
class FieldReader {
 public:
  // The field when present with the right type, else null (and, if required or mistyped, a problem).
  // `where` is the path of `object` ("" for the document), so the field's path is where.key.
  const nlohmann::json* field(const nlohmann::json& object, const std::string& where, std::string_view key,
                              FieldType type, bool required = true);

  std::string text(const nlohmann::json& o, const std::string& where, std::string_view key,
                   bool required = true);
  std::int64_t count(const nlohmann::json& o, const std::string& where, std::string_view key,
                     bool required = true);
  // An absent optional statistic reads as NaN: nothing was measured.
  double number(const nlohmann::json& o, const std::string& where, std::string_view key,
                bool required = true);
  bool boolean(const nlohmann::json& o, const std::string& where, std::string_view key);
  std::uint64_t seed(const nlohmann::json& o, const std::string& where, std::string_view key);
  // An array of integers (shapes, element coordinates); `where` is the array's own path.
  std::vector<std::int64_t> integers(const nlohmann::json& list, const std::string& where);

  // Records a problem unless one is already kept. A leading '.' of `where` is dropped.
  void problem(const std::string& where, const std::string& what, std::optional<FieldType> expected = {},
               bool missing = false);

  bool ok() const { return !problem_.has_value(); }
  const FieldProblem& first_problem() const { return *problem_; }

 private:
  std::optional<FieldProblem> problem_;
};

// An (op, dtype) entry at `where`: an object whose dtype, counts, statistics and tolerance are all
// required (gpuemu has always written every one), statistics decoded as decode_number does.
DtypeEntry read_dtype_entry(FieldReader& reader, const nlohmann::json& entry, const std::string& where);

}  // namespace gpuemu::result
