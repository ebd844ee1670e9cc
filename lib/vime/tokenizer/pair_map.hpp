// An open-addressing hash map from a pair of token ids to the merge it makes (rank, merged id): the
// innermost lookup of BPE, so it is flat and allocation-free to probe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vime::tokenizer {

struct Merge {
  uint32_t rank;
  int32_t id;
};

class PairMap {
 public:
  void reserve(size_t count);
  // Inserts or overwrites (a later duplicate merge wins, as in HF's merge map).
  void insert(int32_t left, int32_t right, Merge merge);
  const Merge* find(int32_t left, int32_t right) const {
    if (slots_.empty()) return nullptr;
    const uint64_t key = pack(left, right);
    for (size_t i = hash(key);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.key == key) return &slot.merge;
      if (slot.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge{};
  };
  static uint64_t pack(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  size_t hash(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  void grow();

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace vime::tokenizer
