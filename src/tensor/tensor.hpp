// A tensor as gpuemu moves it around: dtype, logical shape, strides in elements, and the raw
// little-endian storage buffer those strides index into (which may have gaps for strided layouts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.hpp"
#include "tensor/storage.hpp"
#include "util/error.hpp"

namespace gpuemu::tensor {

using Shape = std::vector<std::int64_t>;

// Memory layouts a case can materialise. Numbers are persisted: never renumber.
enum class Layout : int {
  contiguous = 0,  // row-major, strides are the usual products
  transposed = 1,  // last two dims stored swapped (column-major for matrices); logical shape unchanged
  strided = 2,     // row-major with a gap after every row (leading-dim padding), so strides[-2] > shape[-1]
  // dim 1 (channels) stored innermost: NHWC memory of an NCHW tensor (torch.channels_last)
  channels_last = 3,
};
std::string_view layout_name(Layout layout);
std::optional<Layout> parse_layout(std::string_view name);

struct Tensor {
  DType dtype = DType::float32;
  Shape shape;
  std::vector<std::int64_t> strides;  // in elements; same rank as shape
  Storage data;                       // storage buffer, little-endian elements (owned or a view)

  std::int64_t numel() const;
  bool is_contiguous() const;  // row-major with no gaps (data.size() == numel * itemsize)

  // Decode the element at a row-major logical index (0 <= i < numel), following strides.
  double get(std::int64_t logical_index) const;
  // All elements in row-major logical order, decoded exactly to double.
  std::vector<double> to_doubles() const;
  // A contiguous row-major copy (identity if already contiguous).
  Tensor contiguous() const;
  // Decode logical elements [first, first + out.size()) in row-major order into `out`, following
  // strides; the bulk form of get() that the comparison streams through in chunks. Requires a
  // view that passes validate_view; throws std::out_of_range if the range leaves [0, numel).
  void decode_range(std::int64_t first, std::span<double> out) const;

  // Contiguous tensor from doubles, each rounded to the dtype (nearest-even; ints truncate toward
  // zero after clamping to the type's range; bool is value != 0).
  static Tensor from_doubles(DType dtype, Shape shape, std::span<const double> values);
  static Tensor zeros(DType dtype, Shape shape);
};

// Named tensors (inputs or outputs of one case), ordered by name.
using NamedTensors = std::map<std::string, Tensor>;

std::vector<std::int64_t> contiguous_strides(const Shape& shape);
std::int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[2, 3]"
// Logical coordinates of the row-major linear index `linear` (0 <= linear < shape_numel(shape)).
std::vector<std::int64_t> unravel_index(const Shape& shape, std::int64_t linear);

// Materialise a contiguous tensor in the given memory layout: the result has the same logical
// values and shape, but its data buffer and strides are the real layout. Rank < 2 is unchanged
// for transposed, rank < 3 for channels_last (rank 4 is NHWC; in general dims 0, 2, ..., r-1, 1
// from outermost to innermost, so rank 5 is torch's channels_last_3d); strided pads rows by `pad` elements
// (pad >= 1; smaller values count as 1), and for rank 1 uses stride 2 (every other element); rank 0 is
// unchanged. The gaps hold layout_poison(). A non-contiguous input is made contiguous first.
Tensor with_layout(const Tensor& contiguous_tensor, Layout layout, std::int64_t pad = 3);
// What fills layout gaps, chosen so a kernel that ignores strides visibly reads garbage: NaN for
// floating dtypes, the minimum for signed ints, 255 for uint8, true for bool.
double layout_poison(DType dtype);

// Checks that strides/shape/data describe a valid in-bounds view (for tensors read from scripts
// and peers). Errors name `what` (e.g. "output 'y' of scripts/ref.py").
Expected<void> validate_view(const Tensor& t, const std::string& what);

}  // namespace gpuemu::tensor
