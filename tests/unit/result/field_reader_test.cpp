// result/field_reader: the typed field reads result.json and baseline files share. The first problem
// keeps its path, the type wanted and whether the field was missing, so each document words it.
#include "result/field_reader.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace gpuemu::result {
namespace {

nlohmann::json dtype_entry() {
  return to_json(DtypeEntry{.dtype = "float16",
                            .total = 4,
                            .passed = 3,
                            .failed = 1,
                            .errors = 0,
                            .figures = {.max_abs = std::numeric_limits<double>::infinity(),
                                        .max_rel = std::numeric_limits<double>::quiet_NaN(),
                                        .max_ulp = 2,
                                        .tolerance_used = 0.5},
                            .atol = 1e-2,
                            .rtol = 1e-3});
}

TEST(FieldReader, ADtypeEntryReadsBackWhatToJsonWrote) {
  FieldReader r;
  const auto read = read_dtype_entry(r, nlohmann::json::parse(dtype_entry().dump()), "ops[0].dtypes[0]");
  ASSERT_TRUE(r.ok()) << r.first_problem().what;
  EXPECT_EQ(to_json(read).dump(), dtype_entry().dump());
  EXPECT_TRUE(std::isinf(read.figures.max_abs));
  EXPECT_TRUE(std::isnan(read.figures.max_rel));
}

TEST(FieldReader, AMissingFieldIsKeptWithItsPathAndType) {
  auto entry = dtype_entry();
  entry.erase("tolerance_used");
  entry.erase("atol");
  FieldReader r;
  read_dtype_entry(r, entry, "entries[2]");
  ASSERT_FALSE(r.ok());
  const auto& problem = r.first_problem();
  EXPECT_EQ(problem.path, "entries[2].tolerance_used");
  EXPECT_EQ(problem.what, "is missing");
  EXPECT_EQ(problem.expected, FieldType::number);
  EXPECT_TRUE(problem.missing);
}

TEST(FieldReader, AWrongTypeIsKeptWithWhatWasFound) {
  auto entry = dtype_entry();
  entry["passed"] = "3";
  FieldReader r;
  read_dtype_entry(r, entry, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_problem().path, "passed");
  EXPECT_EQ(r.first_problem().what, "should be a non-negative integer, found \"3\"");
  EXPECT_EQ(r.first_problem().expected, FieldType::count);
  EXPECT_FALSE(r.first_problem().missing);
}

TEST(FieldReader, ACountAboveTheInt64RangeIsNotACount) {
  // It used to read as a negative number.
  nlohmann::json o = {{"n", 18446744073709551615ull}, {"m", 9223372036854775807ull}};
  FieldReader r;
  EXPECT_EQ(r.count(o, "", "m"), 9223372036854775807LL);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.count(o, "", "n"), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_problem().path, "n");
}

TEST(FieldReader, NotAnObjectIsTheEntrysOwnProblem) {
  FieldReader r;
  read_dtype_entry(r, nlohmann::json::array(), "ops[1].dtypes[0]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_problem().path, "ops[1].dtypes[0]");
  EXPECT_EQ(r.first_problem().expected, FieldType::object);
}

}  // namespace
}  // namespace gpuemu::result
