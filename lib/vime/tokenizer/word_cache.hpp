// The pre-token cache: word bytes -> ids, in one flat table with its keys and ids in two arenas, so
// a hit costs one hash and one compare and an insert allocates nothing per entry. Like HF's cache
// it stops taking words when full. Not thread-safe: BpeModel keeps one per thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vime::tokenizer {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 255;  // HF caches words shorter than 256 bytes
  static constexpr size_t kCapacity = 1 << 15;  // words

  // The cached ids of `word`, or nullptr.
  const std::span<const int32_t>* find(std::string_view word, uint64_t hash) const;
  void insert(std::string_view word, uint64_t hash, std::span<const int32_t> ids);
  size_t size() const { return size_; }

  static uint64_t hash(std::string_view word);

 private:
  struct Slot {
    uint64_t hash = 0;  // 0: empty (hash() never returns 0)
    uint32_t key_offset = 0;
    uint32_t ids_offset = 0;
    uint16_t key_length = 0;
    uint16_t ids_length = 0;
  };
  static constexpr size_t kSlots = kCapacity * 2;

  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<int32_t> ids_;
  size_t size_ = 0;
  mutable std::span<const int32_t> found_;
};

}  // namespace vime::tokenizer
