// Storage (storage.hpp): a tensor's bytes, owned or viewed.
#include "tensor/storage.hpp"

#include <algorithm>

namespace gpuemu::tensor {

Storage Storage::view(std::shared_ptr<const void> keeper, std::span<const std::byte> bytes,
                      std::string_view segment, std::uint64_t offset) {
  Storage s;
  if (!keeper) {  // nothing keeps the bytes alive: copy them
    s.owned_.assign(bytes.begin(), bytes.end());
    return s;
  }
  s.keeper_ = std::move(keeper);
  s.view_ = bytes;
  s.segment_ = segment;
  s.segment_offset_ = offset;
  return s;
}

void Storage::own() {
  if (!keeper_) return;
  owned_.assign(view_.begin(), view_.end());
  view_ = {};
  segment_ = {};
  keeper_.reset();
}

bool operator==(const Storage& a, const Storage& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace gpuemu::tensor
