// daemon/request: the typed readers of request header fields. A field naming a dtype, layout or
// value distribution, alone or in a list, reads as its enum or is a bad_request listing the choices.
#include "daemon/request.hpp"

#include <gtest/gtest.h>

#include "rng/values.hpp"

namespace gpuemu::daemon {
namespace {

TEST(RequestFields, AChoiceReadsAsItsValueAndAnAbsentOneAsNothing) {
  const nlohmann::json header = {{"dtype", "bfloat16"}, {"values", "boundary"}};
  const Fields fields(header, "fuzz");
  EXPECT_EQ(fields.optional_choice("dtype", tensor::parse_dtype, kDtypeChoices).value(),
            tensor::DType::bfloat16);
  EXPECT_EQ(fields.optional_choice("values", rng::parse_distribution, kValuesChoices).value(),
            rng::ValueDistribution::boundary);
  EXPECT_EQ(fields.optional_choice("layout", tensor::parse_layout, kLayoutChoices).value(), std::nullopt);
}

TEST(RequestFields, AnUnknownChoiceNamesTheRequestTheFieldAndTheChoices) {
  const nlohmann::json header = {{"layout", "diagonal"}, {"dtype", 16}};
  const Fields fields(header, "validate");
  const auto layout = fields.optional_choice("layout", tensor::parse_layout, kLayoutChoices);
  ASSERT_FALSE(layout.has_value());
  EXPECT_EQ(layout.error().kind, WireError::bad_request);
  EXPECT_EQ(layout.error().message,
            "validate request: layout 'diagonal' is not contiguous, transposed, strided or channels_last");
  // A name of the wrong JSON type is the string reader's error, before any choice.
  const auto dtype = fields.optional_choice("dtype", tensor::parse_dtype, kDtypeChoices);
  ASSERT_FALSE(dtype.has_value());
  EXPECT_EQ(dtype.error().kind, WireError::bad_request);
  EXPECT_NE(dtype.error().message.find("\"dtype\""), std::string::npos) << dtype.error().message;
}

TEST(RequestFields, AListOfChoicesNamesTheFirstUnknownEntry) {
  const nlohmann::json header = {{"dtypes", {"float16", "float32"}}, {"layouts", {"strided", "tiled"}}};
  const Fields fields(header, "fuzz");
  const auto dtypes = fields.optional_choices("dtypes", tensor::parse_dtype, kDtypeChoices);
  ASSERT_TRUE(dtypes.has_value()) << dtypes.error().message;
  EXPECT_EQ(*dtypes, (std::vector{tensor::DType::float16, tensor::DType::float32}));
  const auto layouts = fields.optional_choices("layouts", tensor::parse_layout, kLayoutChoices);
  ASSERT_FALSE(layouts.has_value());
  EXPECT_EQ(layouts.error().message,
            "fuzz request: 'tiled' in \"layouts\" is not contiguous, transposed, strided or channels_last");
  EXPECT_EQ(fields.optional_choices("absent", tensor::parse_dtype, kDtypeChoices).value(), std::nullopt);
}

}  // namespace
}  // namespace gpuemu::daemon
