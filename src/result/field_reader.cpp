// Typed reads of JSON fields (see field_reader.hpp): type checks, seeds, non-finite numbers, and the
// (op, dtype) entry result.json and baseline files share, so both decode a statistic the same way.
#include "result/field_reader.hpp"

#include <charconv>
#include <limits>

#include "util/json_number.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::result {

namespace keys = util::result_keys;
namespace {

using Json = nlohmann::json;

bool is_seed(const Json& value) {
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  // 20 digits may still exceed 2^64 - 1; compare as text of equal length.
  return text.size() < 20 || text <= "18446744073709551615";
}

bool has_type(const Json& value, FieldType type) {
  switch (type) {
    case FieldType::string:
      return value.is_string();
    case FieldType::boolean:
      return value.is_boolean();
    case FieldType::count:
      // Read as int64: an unsigned value above its range is not a count either.
      return value.is_number_unsigned()
                 ? value.get<std::uint64_t>() <= std::uint64_t{std::numeric_limits<std::int64_t>::max()}
                 : value.is_number_integer() && value.get<std::int64_t>() >= 0;
    case FieldType::number:
      return util::read_json_number(value).has_value();
    case FieldType::array:
      return value.is_array();
    case FieldType::object:
      return value.is_object();
    case FieldType::seed:
      return is_seed(value);
    case FieldType::integer:
      return value.is_number_integer();
  }
  return false;
}

std::uint64_t seed_of(const Json& value) {
  const auto& text = value.get_ref<const std::string&>();
  std::uint64_t seed = 0;
  std::from_chars(text.data(), text.data() + text.size(), seed);
  return seed;
}

}  // namespace

std::string_view field_type_name(FieldType type) {
  switch (type) {
    case FieldType::string:
      return "a string";
    case FieldType::boolean:
      return "true or false";
    case FieldType::count:
      return "a non-negative integer";
    case FieldType::number:
      return "a number or \"NaN\", \"Infinity\", \"-Infinity\"";
    case FieldType::array:
      return "an array";
    case FieldType::object:
      return "an object";
    case FieldType::seed:
      return "a seed as a decimal string";
    case FieldType::integer:
      return "an integer";
  }
  return "a value";
}

const Json* FieldReader::field(const Json& object, const std::string& where, std::string_view key,
                               FieldType type, bool required) {
  const std::string path = where + "." + std::string(key);
  auto it = object.find(key);
  if (it == object.end()) {
    if (required) problem(path, "is missing", type, true);
    return nullptr;
  }
  if (!has_type(*it, type)) {
    std::string shown = it->dump(-1, ' ', false, Json::error_handler_t::replace);
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    problem(path, "should be " + std::string(field_type_name(type)) + ", found " + shown, type);
    return nullptr;
  }
  return &*it;
}

std::string FieldReader::text(const Json& o, const std::string& where, std::string_view key, bool required) {
  const Json* v = field(o, where, key, FieldType::string, required);
  return v ? v->get<std::string>() : std::string();
}

std::int64_t FieldReader::count(const Json& o, const std::string& where, std::string_view key,
                                bool required) {
  const Json* v = field(o, where, key, FieldType::count, required);
  return v ? v->get<std::int64_t>() : 0;
}

double FieldReader::number(const Json& o, const std::string& where, std::string_view key, bool required) {
  const Json* v = field(o, where, key, FieldType::number, required);
  return v ? decode_number(*v) : std::numeric_limits<double>::quiet_NaN();
}

bool FieldReader::boolean(const Json& o, const std::string& where, std::string_view key) {
  const Json* v = field(o, where, key, FieldType::boolean);
  return v && v->get<bool>();
}

std::uint64_t FieldReader::seed(const Json& o, const std::string& where, std::string_view key) {
  const Json* v = field(o, where, key, FieldType::seed);
  return v ? seed_of(*v) : 0;
}

std::vector<std::int64_t> FieldReader::integers(const Json& list, const std::string& where) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number_integer()) {
      problem(where + "[" + std::to_string(i) + "]", "should be an integer, found " + list[i].dump(),
              FieldType::integer);
      return out;
    }
    out.push_back(list[i].get<std::int64_t>());
  }
  return out;
}

void FieldReader::problem(const std::string& where, const std::string& what,
                          std::optional<FieldType> expected, bool missing) {
  if (problem_) return;
  problem_ = FieldProblem{.path = where.starts_with(".") ? where.substr(1) : where,
                          .what = what,
                          .expected = expected,
                          .missing = missing};
}

DtypeEntry read_dtype_entry(FieldReader& r, const Json& d, const std::string& where) {
  DtypeEntry out;
  if (!d.is_object()) {
    r.problem(where, "should be an object", FieldType::object);
    return out;
  }
  out.dtype = r.text(d, where, "dtype");
  out.total = r.count(d, where, "total");
  out.passed = r.count(d, where, "passed");
  out.failed = r.count(d, where, "failed");
  out.errors = r.count(d, where, "errors");
  out.figures.max_abs = r.number(d, where, keys::kMaxAbs);
  out.figures.max_rel = r.number(d, where, keys::kMaxRel);
  out.figures.max_ulp = r.number(d, where, keys::kMaxUlp);
  out.figures.tolerance_used = r.number(d, where, keys::kToleranceUsed);
  out.atol = r.number(d, where, keys::kAtol);
  out.rtol = r.number(d, where, keys::kRtol);
  return out;
}

}  // namespace gpuemu::result
