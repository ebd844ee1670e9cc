#include "vime/tokenizer/pair_map.hpp"

#include <bit>

namespace vime::tokenizer {

void PairMap::reserve(size_t count) {
  const size_t wanted = std::bit_ceil(count * 2 + 16);
  if (wanted <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(wanted, Slot{});
  mask_ = wanted - 1;
  shift_ = 64 - std::countr_zero(wanted);
  size_ = 0;
  for (const Slot& slot : old) {
    if (slot.key != kEmpty) {
      insert(static_cast<int32_t>(slot.key >> 32), static_cast<int32_t>(slot.key & 0xFFFFFFFF),
             slot.merge);
    }
  }
}

void PairMap::grow() { reserve(slots_.empty() ? 16 : slots_.size()); }

void PairMap::insert(int32_t left, int32_t right, Merge merge) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const uint64_t key = pack(left, right);
  for (size_t i = hash(key);; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.key == key) {
      slot.merge = merge;
      return;
    }
    if (slot.key == kEmpty) {
      slot.key = key;
      slot.merge = merge;
      ++size_;
      return;
    }
  }
}

}  // namespace vime::tokenizer
