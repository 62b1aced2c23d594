// util/json_number: the one JSON spelling of non-finite numbers. Every double round-trips, and only
// a JSON number or one of "NaN", "Infinity", "-Infinity" reads as a number.
#include "util/json_number.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace gpuemu::util {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(JsonNumber, NonFiniteValuesAreSpelledAsStringsAndFiniteOnesStayNumbers) {
  EXPECT_EQ(json_number(std::nan("")), "NaN");
  EXPECT_EQ(json_number(kInf), "Infinity");
  EXPECT_EQ(json_number(-kInf), "-Infinity");
  EXPECT_EQ(json_number(-0.5).dump(), "-0.5");
  EXPECT_TRUE(json_number(5e-324).is_number_float());
}

TEST(JsonNumber, EveryValueReadsBackThroughText) {
  for (double v : {0.0, -0.0, 1.0 / 3.0, 5e-324, 1.7976931348623157e308, kInf, -kInf, std::nan("")}) {
    const auto read = read_json_number(nlohmann::json::parse(json_number(v).dump()));
    ASSERT_TRUE(read.has_value()) << v;
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(*read));
    } else {
      EXPECT_EQ(*read, v);
      EXPECT_EQ(std::signbit(*read), std::signbit(v));
    }
  }
  EXPECT_EQ(read_json_number(nlohmann::json(7)), 7.0);
}

TEST(JsonNumber, AnythingElseIsNotANumber) {
  for (const auto& value :
       {nlohmann::json(), nlohmann::json("nan"), nlohmann::json("inf"), nlohmann::json("1.5"),
        nlohmann::json(true), nlohmann::json::array(), nlohmann::json::object()}) {
    EXPECT_EQ(read_json_number(value), std::nullopt) << value.dump();
  }
}

}  // namespace
}  // namespace gpuemu::util
