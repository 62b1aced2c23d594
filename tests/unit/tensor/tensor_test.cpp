// Tensor construction, element access, dtype rounding and saturation, and shape helpers.
#include "tensor/tensor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tensor/half.hpp"

namespace gpuemu::tensor {
namespace {

// Found by the daemon's malformed-message test under UBSan: a peer's shape [2^40, 2^40] overflowed
// before validate_view could refuse it. The helpers saturate and validation names the input.
TEST(Tensor, HugeShapesSaturateAndFailValidation) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const Shape huge = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  EXPECT_EQ(shape_numel(huge), kMax);
  EXPECT_EQ(shape_numel({std::int64_t{1} << 40, std::int64_t{1} << 40, 0}), 0);
  EXPECT_EQ(contiguous_strides({4, std::int64_t{1} << 40, std::int64_t{1} << 40}).front(), kMax);
  Tensor t;
  t.dtype = DType::float32;
  t.shape = huge;
  t.strides = contiguous_strides(huge);
  t.data.resize(16);
  const auto checked = validate_view(t, "input 'x'");
  ASSERT_FALSE(checked.has_value());
  EXPECT_NE(checked.error().message.find("too large to address"), std::string::npos)
      << checked.error().message;
}

TEST(Tensor, ShapeHelpers) {
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({5, 0}), 0);
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), (std::vector<std::int64_t>{}));
  EXPECT_EQ(shape_to_string({2, 3}), "[2, 3]");
  EXPECT_EQ(shape_to_string({}), "[]");
  EXPECT_EQ(unravel_index({2, 3, 4}, 23), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(unravel_index({2, 3, 4}, 5), (std::vector<std::int64_t>{0, 1, 1}));
}

TEST(Tensor, FromDoublesRoundsToDtype) {
  const std::vector<double> v{0.1, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), -0.0, 70000.0};
  Tensor h = Tensor::from_doubles(DType::float16, {4}, v);
  EXPECT_EQ(h.data.size(), 8u);
  EXPECT_EQ(h.get(0), f16_to_double(double_to_f16(0.1)));
  EXPECT_EQ(h.get(1), f16_to_double(0x3C01));
  EXPECT_TRUE(std::signbit(h.get(2)));
  EXPECT_EQ(h.get(3), INFINITY);
  Tensor f = Tensor::from_doubles(DType::float32, {4}, v);
  EXPECT_EQ(f.get(0), static_cast<double>(0.1f));
  Tensor d = Tensor::from_doubles(DType::float64, {2, 2}, v);
  EXPECT_EQ(d.to_doubles()[0], 0.1);
  Tensor b = Tensor::from_doubles(DType::bfloat16, {4}, v);
  EXPECT_EQ(b.get(3), 70144.0);  // 70000 to 8 significant bits
}

TEST(Tensor, FromDoublesSaturatesIntegers) {
  const std::vector<double> v{2.9, -2.9, 300.0, -300.0, NAN, INFINITY, -INFINITY, 0.0};
  EXPECT_EQ(Tensor::from_doubles(DType::int8, {8}, v).to_doubles(),
            (std::vector<double>{2, -2, 127, -128, 0, 127, -128, 0}));
  EXPECT_EQ(Tensor::from_doubles(DType::uint8, {8}, v).to_doubles(),
            (std::vector<double>{2, 0, 255, 0, 0, 255, 0, 0}));
  EXPECT_EQ(Tensor::from_doubles(DType::int16, {8}, v).to_doubles(),
            (std::vector<double>{2, -2, 300, -300, 0, 32767, -32768, 0}));
  EXPECT_EQ(Tensor::from_doubles(DType::bool_, {8}, v).to_doubles(),
            (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 0}));
  Tensor i64 = Tensor::from_doubles(DType::int64, {3}, std::vector<double>{1e19, -1e19, -123456789012.7});
  std::int64_t raw[3];
  std::memcpy(raw, i64.data.data(), sizeof raw);
  EXPECT_EQ(raw[0], std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(raw[1], std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(raw[2], -123456789012);
  Tensor i32 = Tensor::from_doubles(DType::int32, {2}, std::vector<double>{3e9, -2147483648.0});
  EXPECT_EQ(i32.to_doubles(), (std::vector<double>{2147483647.0, -2147483648.0}));
}

TEST(Tensor, FromDoublesRejectsWrongCount) {
  EXPECT_THROW(Tensor::from_doubles(DType::float32, {2, 2}, std::vector<double>{1, 2, 3}),
               std::invalid_argument);
}

TEST(Tensor, ZerosAndContiguity) {
  Tensor z = Tensor::zeros(DType::bfloat16, {3, 5});
  EXPECT_EQ(z.numel(), 15);
  EXPECT_EQ(z.data.size(), 30u);
  EXPECT_TRUE(z.is_contiguous());
  EXPECT_EQ(z.get(14), 0.0);
  Tensor scalar = Tensor::from_doubles(DType::float64, {}, std::vector<double>{4.5});
  EXPECT_TRUE(scalar.is_contiguous());
  EXPECT_EQ(scalar.get(0), 4.5);
  Tensor odd = z;
  odd.strides = {1, 3};
  EXPECT_FALSE(odd.is_contiguous());
  Tensor ones_dim = Tensor::zeros(DType::float32, {1, 4});
  ones_dim.strides = {99, 1};  // the stride of a size-1 dimension is never used
  EXPECT_TRUE(ones_dim.is_contiguous());
  Tensor longer = Tensor::zeros(DType::float32, {4});
  longer.data.resize(20);
  EXPECT_FALSE(longer.is_contiguous());
}

TEST(Tensor, GetFollowsStrides) {
  // A 2x3 view into a 12-element buffer with strides (1, 4): element (i, j) sits at j*4 + i.
  std::vector<double> storage(12);
  for (int k = 0; k < 12; ++k) storage[static_cast<std::size_t>(k)] = k;
  Tensor t = Tensor::from_doubles(DType::int32, {12}, storage);
  t.shape = {2, 3};
  t.strides = {1, 4};
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{0, 4, 8, 1, 5, 9}));
  EXPECT_EQ(t.get(4), 5);
  EXPECT_THROW(t.get(6), std::out_of_range);
  EXPECT_THROW(t.get(-1), std::out_of_range);
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_doubles(), (std::vector<double>{0, 4, 8, 1, 5, 9}));
  std::vector<double> part(3);
  t.decode_range(2, part);
  EXPECT_EQ(part, (std::vector<double>{8, 1, 5}));
}

TEST(Tensor, ContiguousKeepsNanPayloadBits) {
  Tensor t = Tensor::zeros(DType::float16, {2, 2});
  const std::uint16_t payload = 0x7E55;
  std::memcpy(t.data.data() + 2, &payload, 2);  // element (0, 1)
  t.strides = {1, 2};                           // read it transposed: (1, 0) is at offset 1
  Tensor c = t.contiguous();
  std::uint16_t out;
  std::memcpy(&out, c.data.data() + 4, 2);
  EXPECT_EQ(out, payload);
}

}  // namespace
}  // namespace gpuemu::tensor
