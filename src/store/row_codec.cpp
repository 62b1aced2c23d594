// Column encodings of the failures table (see store_impl.hpp): decimal u64 seeds and the JSON
// columns dims, shapes and worst. Parse errors name the row so a damaged row is findable.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "store/store_impl.hpp"
#include "util/json_number.hpp"
#include "util/json_text.hpp"
#include "util/seed.hpp"

namespace gpuemu::store::detail {
namespace {

Expected<double> read_number(const nlohmann::json& value, const std::string& what) {
  if (const auto number = util::read_json_number(value)) return *number;
  return fail(ErrorKind::parse, fmt::format("{}: expected a number, got {}", what, value.dump()));
}

Expected<nlohmann::json> parse(const std::string& text, const std::string& what) {
  auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded()) return fail(ErrorKind::parse, fmt::format("{} is not valid JSON", what));
  return document;
}

}  // namespace

std::string seed_text(std::uint64_t seed) {
  return std::to_string(seed);
}

Expected<std::uint64_t> parse_seed(const std::string& text, const std::string& what) {
  const auto value = util::parse_seed(text);
  if (!value) {
    return fail(ErrorKind::parse, fmt::format("{}: seed '{}' is not an unsigned 64-bit decimal", what, text));
  }
  return *value;
}

std::string dims_json(const std::map<std::string, std::int64_t>& dims) {
  return util::dump_json(nlohmann::json(dims), -1);
}

std::string shapes_json(const std::map<std::string, tensor::Shape>& shapes) {
  return util::dump_json(nlohmann::json(shapes), -1);
}

std::string worst_json(const std::vector<check::ElementDiff>& worst) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& w : worst) {
    list.push_back({{"output", w.output},
                    {"index", w.index},
                    {"actual", util::json_number(w.actual)},
                    {"expected", util::json_number(w.expected)},
                    {"abs_err", util::json_number(w.abs_err)},
                    {"rel_err", util::json_number(w.rel_err)}});
  }
  return util::dump_json(list, -1);
}

Expected<std::map<std::string, std::int64_t>> parse_dims(const std::string& text, const std::string& what) {
  const auto document = TRY(parse(text, what));
  if (!document.is_object()) return fail(ErrorKind::parse, fmt::format("{} is not a JSON object", what));
  std::map<std::string, std::int64_t> dims;
  for (const auto& [name, value] : document.items()) {
    if (!value.is_number_integer())
      return fail(ErrorKind::parse, fmt::format("{}: dim '{}' is not an integer", what, name));
    dims[name] = value.get<std::int64_t>();
  }
  return dims;
}

Expected<std::map<std::string, tensor::Shape>> parse_shapes(const std::string& text,
                                                            const std::string& what) {
  const auto document = TRY(parse(text, what));
  if (!document.is_object()) return fail(ErrorKind::parse, fmt::format("{} is not a JSON object", what));
  std::map<std::string, tensor::Shape> shapes;
  for (const auto& [name, value] : document.items()) {
    if (!value.is_array())
      return fail(ErrorKind::parse, fmt::format("{}: shape of '{}' is not a list", what, name));
    tensor::Shape shape;
    for (const auto& d : value) {
      if (!d.is_number_integer()) {
        return fail(ErrorKind::parse, fmt::format("{}: shape of '{}' has a non-integer size", what, name));
      }
      shape.push_back(d.get<std::int64_t>());
    }
    shapes[name] = std::move(shape);
  }
  return shapes;
}

Expected<std::vector<check::ElementDiff>> parse_worst(const std::string& text, const std::string& what) {
  const auto document = TRY(parse(text, what));
  if (!document.is_array()) return fail(ErrorKind::parse, fmt::format("{} is not a JSON list", what));
  std::vector<check::ElementDiff> worst;
  for (const auto& item : document) {
    if (!item.is_object() || !item.contains("output") || !item["output"].is_string() ||
        !item.contains("index") || !item["index"].is_array()) {
      return fail(ErrorKind::parse, fmt::format("{}: an element lacks 'output' or 'index'", what));
    }
    check::ElementDiff diff;
    diff.output = item["output"].get<std::string>();
    for (const auto& i : item["index"]) {
      if (!i.is_number_integer())
        return fail(ErrorKind::parse, fmt::format("{}: an index is not an integer", what));
      diff.index.push_back(i.get<std::int64_t>());
    }
    diff.actual = TRY(read_number(item.value("actual", nlohmann::json()), what + " actual"));
    diff.expected = TRY(read_number(item.value("expected", nlohmann::json()), what + " expected"));
    diff.abs_err = TRY(read_number(item.value("abs_err", nlohmann::json()), what + " abs_err"));
    diff.rel_err = TRY(read_number(item.value("rel_err", nlohmann::json()), what + " rel_err"));
    worst.push_back(std::move(diff));
  }
  return worst;
}

}  // namespace gpuemu::store::detail
