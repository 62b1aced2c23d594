// Real memory layouts (contiguous, transposed, strided, channels_last) and the bounds check every view from
// outside gpuemu goes through before anything reads it.
#include <algorithm>
#include <cstring>
#include <limits>

#include "tensor/element.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::tensor {

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::contiguous:
      return "contiguous";
    case Layout::transposed:
      return "transposed";
    case Layout::strided:
      return "strided";
    case Layout::channels_last:
      return "channels_last";
  }
  return "contiguous";
}

std::optional<Layout> parse_layout(std::string_view name) {
  for (Layout l : {Layout::contiguous, Layout::transposed, Layout::strided, Layout::channels_last}) {
    if (layout_name(l) == name) {
      return l;
    }
  }
  return std::nullopt;
}

double layout_poison(DType dtype) {
  switch (dtype) {
    case DType::int8:
      return std::numeric_limits<std::int8_t>::min();
    case DType::int16:
      return std::numeric_limits<std::int16_t>::min();
    case DType::int32:
      return std::numeric_limits<std::int32_t>::min();
    case DType::int64:
      return static_cast<double>(std::numeric_limits<std::int64_t>::min());
    case DType::uint8:
      return 255;
    case DType::bool_:
      return 1;
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

Tensor with_layout(const Tensor& contiguous_tensor, Layout layout, std::int64_t pad) {
  Tensor src = contiguous_tensor.contiguous();
  const std::size_t rank = src.shape.size();
  if (layout == Layout::contiguous || rank == 0 || (layout == Layout::transposed && rank < 2) ||
      (layout == Layout::channels_last && rank < 3)) {
    return src;
  }
  const std::size_t item = dtype_size(src.dtype);
  const std::int64_t n = src.numel();
  Tensor out{src.dtype, src.shape, std::vector<std::int64_t>(rank, 0), {}};

  if (layout == Layout::transposed) {
    // Each matrix of the last two dims is stored column-major; batch dims stay outer, row-major.
    const std::int64_t rows = src.shape[rank - 2];
    const std::int64_t cols = src.shape[rank - 1];
    out.strides = contiguous_strides(src.shape);
    out.strides[rank - 2] = 1;
    out.strides[rank - 1] = rows;
    out.data.resize(src.data.size());
    const std::int64_t matrix = rows * cols;
    for (std::int64_t b = 0; matrix > 0 && b < n / matrix; ++b) {
      for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t j = 0; j < cols; ++j) {
          std::memcpy(out.data.data() + static_cast<std::size_t>(b * matrix + j * rows + i) * item,
                      src.data.data() + static_cast<std::size_t>(b * matrix + i * cols + j) * item, item);
        }
      }
    }
    return out;
  }

  if (layout == Layout::channels_last) {
    // Memory order, outermost first: dim 0, dims 2..r-1, then dim 1 innermost (NCHW -> NHWC).
    std::vector<std::size_t> order = {0};
    for (std::size_t k = 2; k < rank; ++k) order.push_back(k);
    order.push_back(1);
    std::int64_t step = 1;
    for (std::size_t k = rank; k-- > 0;) {
      out.strides[order[k]] = step;
      step *= std::max<std::int64_t>(src.shape[order[k]], 1);
    }
    out.data.resize(src.data.size());
    std::vector<std::int64_t> index(rank, 0);  // the logical index of linear element i, row-major
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t offset = 0;
      for (std::size_t k = 0; k < rank; ++k) offset += index[k] * out.strides[k];
      std::memcpy(out.data.data() + static_cast<std::size_t>(offset) * item,
                  src.data.data() + static_cast<std::size_t>(i) * item, item);
      for (std::size_t k = rank; k-- > 0;) {
        if (++index[k] < src.shape[k]) break;
        index[k] = 0;
      }
    }
    return out;
  }

  // Strided: rank >= 2 pads each row (last dim) by `pad` elements, so strides[-2] = cols + pad;
  // rank 1 keeps every other slot (stride 2). Gaps, including the one after the last row, are poison.
  const std::int64_t gap = std::max<std::int64_t>(pad, 1);
  const std::int64_t cols = src.shape[rank - 1];
  const std::int64_t row_stride = rank == 1 ? 2 : cols + gap;
  const std::int64_t rows = cols > 0 ? n / cols : 0;
  out.strides = contiguous_strides(src.shape);
  if (rank == 1) {
    out.strides[0] = 2;
  } else {
    std::int64_t step = row_stride;
    for (std::size_t k = rank - 1; k-- > 0;) {
      out.strides[k] = step;
      step *= src.shape[k];
    }
  }
  const std::int64_t slots = rank == 1 ? 2 * n : rows * row_stride;
  out.data.resize(static_cast<std::size_t>(slots) * item);
  std::vector<std::byte> poison(item);
  store_element(src.dtype, layout_poison(src.dtype), poison.data());
  for (std::int64_t s = 0; s < slots; ++s) {
    std::memcpy(out.data.data() + static_cast<std::size_t>(s) * item, poison.data(), item);
  }
  if (rank == 1) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::memcpy(out.data.data() + static_cast<std::size_t>(2 * i) * item,
                  src.data.data() + static_cast<std::size_t>(i) * item, item);
    }
  } else {
    for (std::int64_t r = 0; r < rows; ++r) {
      std::memcpy(out.data.data() + static_cast<std::size_t>(r * row_stride) * item,
                  src.data.data() + static_cast<std::size_t>(r * cols) * item,
                  static_cast<std::size_t>(cols) * item);
    }
  }
  return out;
}

Expected<void> validate_view(const Tensor& t, const std::string& what) {
  if (t.strides.size() != t.shape.size()) {
    return fail(ErrorKind::parse, what + ": shape " + shape_to_string(t.shape) + " has rank " +
                                      std::to_string(t.shape.size()) + " but strides " +
                                      shape_to_string(t.strides) + " have rank " +
                                      std::to_string(t.strides.size()) + "; give one stride per dimension");
  }
  const std::size_t item = dtype_size(t.dtype);
  if (t.data.size() % item != 0) {
    return fail(ErrorKind::parse,
                what + ": " + std::to_string(t.data.size()) + " bytes of data is not a whole number of " +
                    std::string(dtype_name(t.dtype)) + " elements (" + std::to_string(item) +
                    " bytes each); check the dtype and the encoding of data");
  }
  // Sizes large enough to overflow int64 arithmetic cannot be real buffers; stop them here so
  // every later index computation is safe.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 2;
  std::int64_t numel = 1;
  std::int64_t max_offset = 0;
  bool empty = false;
  for (std::size_t k = 0; k < t.shape.size(); ++k) {
    const std::int64_t d = t.shape[k];
    const std::int64_t s = t.strides[k];
    if (d < 0) {
      return fail(ErrorKind::parse, what + ": dimension " + std::to_string(k) + " of shape " +
                                        shape_to_string(t.shape) + " is negative; sizes must be >= 0");
    }
    if (s < 0) {
      return fail(ErrorKind::parse, what + ": stride " + std::to_string(k) + " of " +
                                        shape_to_string(t.strides) +
                                        " is negative; pass a non-negative view (e.g. np.ascontiguousarray)");
    }
    std::int64_t reach = 0;
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(numel, d, &numel) || numel > kMax ||
               __builtin_mul_overflow(d - 1, s, &reach) ||
               __builtin_add_overflow(max_offset, reach, &max_offset) || max_offset > kMax) {
      return fail(ErrorKind::parse, what + ": shape " + shape_to_string(t.shape) + " with strides " +
                                        shape_to_string(t.strides) + " is too large to address");
    }
  }
  const auto available = static_cast<std::int64_t>(t.data.size() / item);
  // Dense row-major strides mean the plain protocol's "data is the tensor": a longer or shorter
  // buffer then is a length mismatch (wrong shape or dtype), not extra storage.
  if (t.strides == contiguous_strides(t.shape) && available != (empty ? 0 : numel)) {
    return fail(ErrorKind::parse, what + ": shape " + shape_to_string(t.shape) + " needs " +
                                      std::to_string(empty ? 0 : numel) + " " +
                                      std::string(dtype_name(t.dtype)) + " elements but data holds " +
                                      std::to_string(available) + "; make shape, dtype and data agree");
  }
  if (empty) {
    return {};
  }
  if (max_offset >= available) {
    return fail(ErrorKind::parse, what + ": shape " + shape_to_string(t.shape) + " with strides " +
                                      shape_to_string(t.strides) + " reaches element " +
                                      std::to_string(max_offset) + " but data holds only " +
                                      std::to_string(available) + " " + std::string(dtype_name(t.dtype)) +
                                      " elements; send the whole buffer");
  }
  return {};
}

}  // namespace gpuemu::tensor
