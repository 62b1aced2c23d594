// dtype names, aliases, sizes and the floating flag.
#include "tensor/dtype.hpp"

#include <gtest/gtest.h>

namespace gpuemu::tensor {
namespace {

TEST(DType, CanonicalNamesRoundTrip) {
  ASSERT_EQ(all_dtype_names().size(), 10u);
  for (auto name : all_dtype_names()) {
    auto dtype = parse_dtype(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(dtype_name(*dtype), name);
  }
  EXPECT_EQ(dtype_name(DType::bool_), "bool");
  EXPECT_EQ(dtype_name(DType::bfloat16), "bfloat16");
}

TEST(DType, Aliases) {
  EXPECT_EQ(parse_dtype("f16"), DType::float16);
  EXPECT_EQ(parse_dtype("fp16"), DType::float16);
  EXPECT_EQ(parse_dtype("half"), DType::float16);
  EXPECT_EQ(parse_dtype("bf16"), DType::bfloat16);
  EXPECT_EQ(parse_dtype("f32"), DType::float32);
  EXPECT_EQ(parse_dtype("fp32"), DType::float32);
  EXPECT_EQ(parse_dtype("float"), DType::float32);
  EXPECT_EQ(parse_dtype("f64"), DType::float64);
  EXPECT_EQ(parse_dtype("fp64"), DType::float64);
  EXPECT_EQ(parse_dtype("double"), DType::float64);
  EXPECT_EQ(parse_dtype("i32"), DType::int32);
  EXPECT_EQ(parse_dtype("int"), DType::int32);
  EXPECT_EQ(parse_dtype("i64"), DType::int64);
  EXPECT_EQ(parse_dtype("long"), DType::int64);
  EXPECT_EQ(parse_dtype("u8"), DType::uint8);
  EXPECT_EQ(parse_dtype("bool_"), DType::bool_);
  EXPECT_EQ(parse_dtype("Float32"), std::nullopt);
  EXPECT_EQ(parse_dtype("float8"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
}

TEST(DType, SizesAndKinds) {
  EXPECT_EQ(dtype_size(DType::float16), 2u);
  EXPECT_EQ(dtype_size(DType::bfloat16), 2u);
  EXPECT_EQ(dtype_size(DType::float32), 4u);
  EXPECT_EQ(dtype_size(DType::float64), 8u);
  EXPECT_EQ(dtype_size(DType::int8), 1u);
  EXPECT_EQ(dtype_size(DType::int16), 2u);
  EXPECT_EQ(dtype_size(DType::int32), 4u);
  EXPECT_EQ(dtype_size(DType::int64), 8u);
  EXPECT_EQ(dtype_size(DType::uint8), 1u);
  EXPECT_EQ(dtype_size(DType::bool_), 1u);
  EXPECT_TRUE(is_floating(DType::bfloat16));
  EXPECT_FALSE(is_floating(DType::int64));
  EXPECT_FALSE(is_floating(DType::bool_));
}

}  // namespace
}  // namespace gpuemu::tensor
