// Real memory layouts: with_layout must change the buffer and strides but not the logical values,
// and validate_view must refuse any view that reads outside its buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tensor/tensor.hpp"

namespace gpuemu::tensor {
namespace {

Tensor iota(DType dtype, Shape shape) {
  std::vector<double> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 100) + 1;
  return Tensor::from_doubles(dtype, std::move(shape), v);
}

TEST(Layout, Names) {
  for (Layout l : {Layout::contiguous, Layout::transposed, Layout::strided, Layout::channels_last}) {
    EXPECT_EQ(parse_layout(layout_name(l)), l);
  }
  EXPECT_EQ(layout_name(Layout::channels_last), "channels_last");
  EXPECT_EQ(layout_name(Layout::strided), "strided");
  EXPECT_EQ(parse_layout("column_major"), std::nullopt);
}

TEST(Layout, TransposedMatrixIsColumnMajor) {
  Tensor t = with_layout(iota(DType::float32, {2, 3}), Layout::transposed);
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{1, 2}));
  EXPECT_FALSE(t.is_contiguous());
  // Storage order is column by column: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2).
  Tensor raw = t;
  raw.shape = {6};
  raw.strides = {1};
  EXPECT_EQ(raw.to_doubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Layout, TransposedBatchDimsStayOuter) {
  Tensor t = with_layout(iota(DType::float64, {2, 3, 4}), Layout::transposed);
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{12, 1, 3}));
  EXPECT_EQ(t.to_doubles(), iota(DType::float64, {2, 3, 4}).to_doubles());
}

TEST(Layout, ChannelsLastIsNhwcMemory) {
  // N=2, C=3, H=2, W=2: torch's channels_last strides (H*W*C, 1, W*C, C).
  const Tensor nchw = iota(DType::float32, {2, 3, 2, 2});
  Tensor t = with_layout(nchw, Layout::channels_last);
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{12, 1, 6, 3}));
  EXPECT_EQ(t.data.size(), nchw.data.size());  // a permutation: no gaps
  EXPECT_EQ(t.to_doubles(), nchw.to_doubles());
  // The first pixel's three channels lie next to each other in memory.
  Tensor raw = t;
  raw.shape = {3};
  raw.strides = {1};
  EXPECT_EQ(raw.to_doubles(), (std::vector<double>{1, 5, 9}));
  // Rank 5 is channels_last_3d; ranks below 3 have no channel dim to move and stay contiguous.
  EXPECT_EQ(with_layout(iota(DType::float32, {1, 2, 3, 4, 5}), Layout::channels_last).strides,
            (std::vector<std::int64_t>{120, 1, 40, 10, 2}));
  EXPECT_TRUE(with_layout(iota(DType::float32, {4, 5}), Layout::channels_last).is_contiguous());
  EXPECT_TRUE(validate_view(t, "channels_last").has_value());
}

TEST(Layout, StridedRowsHavePoisonGaps) {
  Tensor t = with_layout(iota(DType::float32, {3, 4}), Layout::strided, 2);
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{6, 1}));
  EXPECT_EQ(t.data.size(), 3u * 6 * 4);
  Tensor raw = t;
  raw.shape = {18};
  raw.strides = {1};
  const auto storage = raw.to_doubles();
  for (std::size_t s = 0; s < storage.size(); ++s) {
    EXPECT_EQ(std::isnan(storage[s]), s % 6 >= 4) << s;
  }
  EXPECT_EQ(t.to_doubles(), iota(DType::float32, {3, 4}).to_doubles());
  // Integers get the type's minimum in the gaps.
  Tensor i = with_layout(iota(DType::int16, {2, 2}), Layout::strided, 1);
  Tensor iraw = i;
  iraw.shape = {6};
  iraw.strides = {1};
  EXPECT_EQ(iraw.to_doubles(), (std::vector<double>{1, 2, -32768, 3, 4, -32768}));
}

TEST(Layout, LowRanks) {
  Tensor v = with_layout(iota(DType::float32, {5}), Layout::strided);
  EXPECT_EQ(v.strides, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(v.data.size(), 40u);
  EXPECT_EQ(v.to_doubles(), iota(DType::float32, {5}).to_doubles());
  Tensor vt = with_layout(iota(DType::float32, {5}), Layout::transposed);
  EXPECT_TRUE(vt.is_contiguous());
  Tensor s = with_layout(iota(DType::float32, {}), Layout::strided);
  EXPECT_TRUE(s.is_contiguous());
  Tensor empty = with_layout(Tensor::zeros(DType::float32, {0, 3}), Layout::strided);
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_TRUE(validate_view(empty, "empty").has_value());
}

TEST(Layout, RandomShapesRoundTripThroughContiguous) {
  std::mt19937 gen(7);
  const DType dtypes[] = {DType::float16, DType::bfloat16, DType::float32, DType::float64,
                          DType::int8,    DType::int64,    DType::uint8,   DType::bool_};
  for (int trial = 0; trial < 300; ++trial) {
    Shape shape(static_cast<std::size_t>(gen() % 5));
    for (auto& d : shape) d = static_cast<std::int64_t>(gen() % 6);
    const DType dtype = dtypes[gen() % 8];
    Tensor base = iota(dtype, shape);
    for (Layout layout : {Layout::transposed, Layout::strided}) {
      Tensor laid = with_layout(base, layout, 1 + static_cast<std::int64_t>(gen() % 4));
      ASSERT_TRUE(validate_view(laid, "laid").has_value()) << shape_to_string(shape);
      Tensor back = laid.contiguous();
      ASSERT_TRUE(back.is_contiguous());
      ASSERT_EQ(back.data, base.data) << shape_to_string(shape) << " " << layout_name(layout);
      ASSERT_EQ(laid.to_doubles(), base.to_doubles());
    }
  }
}

TEST(ValidateView, AcceptsAndRejects) {
  Tensor t = iota(DType::float32, {2, 3});
  EXPECT_TRUE(validate_view(t, "x").has_value());

  Tensor short_data = t;
  short_data.data.resize(20);
  auto e = validate_view(short_data, "output 'y' of ref.py");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().message,
            "output 'y' of ref.py: shape [2, 3] needs 6 float32 elements but data holds 5; make shape, dtype "
            "and data agree");

  Tensor long_data = t;
  long_data.data.resize(28);
  EXPECT_FALSE(validate_view(long_data, "x").has_value());

  Tensor ragged = t;
  ragged.data.resize(23);
  e = validate_view(ragged, "x");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("not a whole number of float32 elements"), std::string::npos);

  Tensor out_of_bounds = t;
  out_of_bounds.strides = {3, 2};  // reaches 1*3 + 2*2 = 7 >= 6
  e = validate_view(out_of_bounds, "input 'a'");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(
      e.error().message,
      "input 'a': shape [2, 3] with strides [3, 2] reaches element 7 but data holds only 6 float32 elements; "
      "send the whole buffer");

  Tensor rank = t;
  rank.strides = {1};
  EXPECT_FALSE(validate_view(rank, "x").has_value());
  Tensor negative = t;
  negative.strides = {3, -1};
  EXPECT_FALSE(validate_view(negative, "x").has_value());
  Tensor negative_dim = t;
  negative_dim.shape = {-2, 3};
  EXPECT_FALSE(validate_view(negative_dim, "x").has_value());
  Tensor huge = t;
  huge.shape = {1ll << 40, 1ll << 40};
  huge.strides = {0, 0};
  e = validate_view(huge, "x");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("too large"), std::string::npos);

  Tensor broadcast = t;  // stride 0 rows read the same storage: a legal numpy view
  broadcast.shape = {4, 3};
  broadcast.strides = {0, 1};
  EXPECT_TRUE(validate_view(broadcast, "x").has_value());
  EXPECT_EQ(broadcast.get(10), 2);
}

}  // namespace
}  // namespace gpuemu::tensor
