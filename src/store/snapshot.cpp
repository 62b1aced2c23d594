// Encoding and decoding input snapshots (format in snapshot.hpp). Decoding trusts nothing: a blob
// damaged on disk gives an error naming the field, never an out-of-bounds read.
#include "store/snapshot.hpp"

#include <cstring>

#include <fmt/format.h>

namespace gpuemu::store {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'E', 'M', 'U', 'S', '1'};
constexpr std::uint32_t kMaxRank = 64;

template <class T>
void put(std::vector<std::byte>& out, T value) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  auto bits = static_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<std::byte>(bits & 0xff));
    bits = static_cast<U>(bits >> 8);
  }
}

// Reads fields from the blob in order; the first short read makes every later read fail too.
class Reader {
 public:
  Reader(const std::vector<std::byte>& blob, const std::string& what) : blob_(blob), what_(what) {}

  template <class T>
  Expected<T> get(std::string_view field) {
    using U = std::make_unsigned_t<T>;
    TRY(need(sizeof(T), field));
    U bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bits = static_cast<U>(bits | static_cast<U>(static_cast<U>(blob_[pos_ + i]) << (8 * i)));
    }
    pos_ += sizeof(T);
    return static_cast<T>(bits);
  }

  Expected<std::span<const std::byte>> bytes(std::uint64_t count, std::string_view field) {
    TRY(need(count, field));
    std::span<const std::byte> span(blob_.data() + pos_, static_cast<std::size_t>(count));
    pos_ += static_cast<std::size_t>(count);
    return span;
  }

  bool at_end() const { return pos_ == blob_.size(); }
  std::size_t position() const { return pos_; }

  std::unexpected<Error> error(std::string_view problem) const {
    return fail(ErrorKind::parse,
                fmt::format("{} is damaged at byte {}: {}; the case can still be replayed from its seed "
                            "(gpuemu reproduce SEED --op OP) if the config has not changed",
                            what_, pos_, problem));
  }

 private:
  Expected<void> need(std::uint64_t count, std::string_view field) {
    if (count > blob_.size() - pos_) {
      return error(fmt::format("{} needs {} bytes but only {} remain", field, count, blob_.size() - pos_));
    }
    return {};
  }

  const std::vector<std::byte>& blob_;
  const std::string& what_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::byte> encode_snapshot(const tensor::NamedTensors& tensors) {
  std::vector<std::byte> out;
  std::size_t total = sizeof kMagic + 4;
  for (const auto& [name, t] : tensors)
    total += 4 + name.size() + 8 + 16 * t.shape.size() + 8 + t.data.size();
  out.reserve(total);
  for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
  put(out, static_cast<std::uint32_t>(tensors.size()));
  for (const auto& [name, t] : tensors) {
    put(out, static_cast<std::uint32_t>(name.size()));
    for (char c : name) out.push_back(static_cast<std::byte>(c));
    put(out, static_cast<std::uint32_t>(t.dtype));
    put(out, static_cast<std::uint32_t>(t.shape.size()));
    for (auto d : t.shape) put(out, d);
    // Strides should match the rank; a tensor without strides is contiguous by definition.
    const auto strides = t.strides.size() == t.shape.size() ? t.strides : tensor::contiguous_strides(t.shape);
    for (auto s : strides) put(out, s);
    put(out, static_cast<std::uint64_t>(t.data.size()));
    out.insert(out.end(), t.data.begin(), t.data.end());
  }
  return out;
}

Expected<tensor::NamedTensors> decode_snapshot(const std::vector<std::byte>& blob, const std::string& what) {
  Reader in(blob, what);
  auto magic = TRY(in.bytes(sizeof kMagic, "the format tag"));
  if (std::memcmp(magic.data(), kMagic, sizeof kMagic) != 0)
    return in.error("it does not start with GPUEMUS1");
  const auto count = TRY(in.get<std::uint32_t>("the tensor count"));
  tensor::NamedTensors tensors;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto name_length = TRY(in.get<std::uint32_t>("a tensor name length"));
    auto name_bytes = TRY(in.bytes(name_length, "a tensor name"));
    std::string name(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
    const std::string field = fmt::format("tensor '{}'", name);
    tensor::Tensor t;
    const auto dtype = TRY(in.get<std::uint32_t>(field + " dtype"));
    if (dtype > static_cast<std::uint32_t>(tensor::DType::bool_)) {
      return in.error(fmt::format("{} has unknown dtype number {}", field, dtype));
    }
    t.dtype = static_cast<tensor::DType>(dtype);
    const auto rank = TRY(in.get<std::uint32_t>(field + " rank"));
    if (rank > kMaxRank) return in.error(fmt::format("{} has rank {} (at most {})", field, rank, kMaxRank));
    for (std::uint32_t d = 0; d < rank; ++d) t.shape.push_back(TRY(in.get<std::int64_t>(field + " shape")));
    for (std::uint32_t d = 0; d < rank; ++d)
      t.strides.push_back(TRY(in.get<std::int64_t>(field + " strides")));
    const auto length = TRY(in.get<std::uint64_t>(field + " byte length"));
    auto data = TRY(in.bytes(length, field + " data"));
    t.data.assign(data.begin(), data.end());
    if (auto valid = tensor::validate_view(t, what + ", " + field); !valid) {
      return in.error(valid.error().message);
    }
    if (!tensors.emplace(std::move(name), std::move(t)).second) {
      return in.error(fmt::format("{} appears twice", field));
    }
  }
  if (!in.at_end())
    return in.error(fmt::format("{} bytes follow the last tensor", blob.size() - in.position()));
  return tensors;
}

}  // namespace gpuemu::store
