#include "vime/tokenizer/word_cache.hpp"

#include <cstring>

namespace vime::tokenizer {

uint64_t WordCache::hash(std::string_view word) {
  // 8 bytes at a time, multiply-xorshift mixing: words are short, so this beats a byte loop.
  uint64_t h = 0x9E3779B97F4A7C15ull ^ word.size();
  size_t i = 0;
  for (; i + 8 <= word.size(); i += 8) {
    uint64_t chunk;
    std::memcpy(&chunk, word.data() + i, 8);
    h = (h ^ chunk) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, word.data() + i, word.size() - i);
  h = (h ^ tail) * 0x94D049BB133111EBull;
  h ^= h >> 29;
  return h | 1;
}

const std::span<const int32_t>* WordCache::find(std::string_view word, uint64_t hash) const {
  if (slots_.empty()) return nullptr;
  for (size_t i = hash & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
    const Slot& slot = slots_[i];
    if (slot.hash == 0) return nullptr;
    if (slot.hash == hash && slot.key_length == word.size() &&
        std::memcmp(keys_.data() + slot.key_offset, word.data(), word.size()) == 0) {
      found_ = std::span<const int32_t>(ids_.data() + slot.ids_offset, slot.ids_length);
      return &found_;
    }
  }
}

void WordCache::insert(std::string_view word, uint64_t hash, std::span<const int32_t> ids) {
  if (size_ >= kCapacity || word.size() > kMaxWordBytes || ids.size() > UINT16_MAX) return;
  if (slots_.empty()) slots_.resize(kSlots);
  size_t i = hash & (kSlots - 1);
  while (slots_[i].hash != 0) i = (i + 1) & (kSlots - 1);
  slots_[i] = Slot{hash, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(ids_.size()),
                   static_cast<uint16_t>(word.size()), static_cast<uint16_t>(ids.size())};
  keys_.append(word);
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  ++size_;
}

}  // namespace vime::tokenizer
