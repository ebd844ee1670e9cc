#include "vime/tokenizer/bpe_model.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "vime/error.hpp"
#include "vime/tokenizer/byte_level.hpp"
#include "vime/tokenizer/unicode.hpp"
#include "vime/tokenizer/word_cache.hpp"

namespace vime::tokenizer {
namespace {

// Each thread keeps its own cache per model, so lookups take no lock.
WordCache& thread_cache(uint64_t key) {
  thread_local std::unordered_map<uint64_t, WordCache> caches;
  thread_local uint64_t last_key = 0;
  thread_local WordCache* last = nullptr;
  if (last_key == key && last != nullptr) return *last;
  if (caches.size() >= 8 && !caches.contains(key)) caches.clear();  // models come and go in tests
  last_key = key;
  last = &caches[key];
  return *last;
}

uint64_t next_cache_key() {
  static std::atomic<uint64_t> counter{1};
  return counter++;
}

struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  bool removed;
};

struct Candidate {
  uint32_t rank;
  int32_t pos;
  int32_t id;
  // std heap functions keep the largest on top; the best candidate is the lowest rank, then
  // leftmost.
  bool operator<(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

std::string byte_fallback_token(unsigned char byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "<0x%02X>", byte);
  return buffer;
}

}  // namespace

BpeModel::BpeModel(TokenIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : options_(std::move(options)), vocab_(std::move(vocab)), cache_key_(next_cache_key()) {
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab_) max_id = std::max(max_id, id);
  id_to_token_.resize(static_cast<size_t>(max_id + 1));
  for (const auto& [token, id] : vocab_) {
    if (id < 0) throw Error("tokenizer: the vocabulary has a negative id for '" + token + "'");
    id_to_token_[static_cast<size_t>(id)] = token;
  }
  if (options_.byte_level) {
    unit_vocab_.reserve(vocab_.size());
    for (const auto& [token, id] : vocab_) {
      if (auto bytes = chars_to_bytes(token)) unit_vocab_.emplace(std::move(*bytes), id);
    }
  }
  const TokenIdMap& units = options_.byte_level ? unit_vocab_ : vocab_;
  for (int b = 0; b < 256; ++b) {
    const std::string unit(1, static_cast<char>(b));
    auto it = options_.byte_level ? units.find(unit) : units.end();
    byte_ids_[b] = it == units.end() ? -1 : it->second;
    auto fallback = vocab_.find(byte_fallback_token(static_cast<unsigned char>(b)));
    byte_fallback_ids_[b] = fallback == vocab_.end() ? -1 : fallback->second;
  }
  if (options_.unk_token) {
    auto it = vocab_.find(*options_.unk_token);
    if (it != vocab_.end()) unk_id_ = it->second;
  }
  const size_t prefix_length = options_.continuing_subword_prefix.size();
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    auto left_id = vocab_.find(left);
    auto right_id = vocab_.find(right);
    const std::string merged =
        left + (right.compare(0, prefix_length, options_.continuing_subword_prefix) == 0
                    ? right.substr(prefix_length)
                    : right);
    auto merged_id = vocab_.find(merged);
    if (left_id == vocab_.end() || right_id == vocab_.end() || merged_id == vocab_.end()) {
      throw Error("tokenizer: merge " + std::to_string(rank) + " ('" + left + "' '" + right +
                  "') names a token that is not in the vocabulary; the tokenizer file is corrupt");
    }
    merges_.insert(left_id->second, right_id->second,
                   Merge{static_cast<uint32_t>(rank), merged_id->second});
  }
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::string_view BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size()) return {};
  return id_to_token_[static_cast<size_t>(id)];
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    const TokenIdMap& units = options_.byte_level ? unit_vocab_ : vocab_;
    auto it = units.find(word);
    if (it != units.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (word.size() > WordCache::kMaxWordBytes) {
    merge_word(word, out);
    return;
  }
  WordCache& cache = thread_cache(cache_key_);
  const uint64_t hash = WordCache::hash(word);
  if (const auto* hit = cache.find(word, hash)) {
    out.insert(out.end(), hit->begin(), hit->end());
    return;
  }
  const size_t first = out.size();
  merge_word(word, out);
  cache.insert(word, hash, std::span<const int32_t>(out.data() + first, out.size() - first));
}

void BpeModel::push_unknown(std::string_view unit, std::vector<int32_t>& symbols,
                            bool& last_was_unk) const {
  if (options_.byte_fallback) {
    bool all = true;
    for (char c : unit) all = all && byte_fallback_ids_[static_cast<unsigned char>(c)] >= 0;
    if (all) {
      for (char c : unit) symbols.push_back(byte_fallback_ids_[static_cast<unsigned char>(c)]);
      last_was_unk = false;
      return;
    }
  }
  if (!unk_id_) return;  // HF drops a character it cannot represent when there is no unk token
  if (options_.fuse_unk && last_was_unk) return;
  symbols.push_back(*unk_id_);
  last_was_unk = true;
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  thread_local std::vector<int32_t> initial;
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  initial.clear();
  bool last_was_unk = false;
  if (options_.byte_level) {
    for (char c : word) {
      const int32_t id = byte_ids_[static_cast<unsigned char>(c)];
      if (id >= 0) {
        initial.push_back(id);
        last_was_unk = false;
      } else {
        push_unknown(std::string_view(&c, 1), initial, last_was_unk);
      }
    }
  } else {
    std::string unit;
    size_t pos = 0;
    while (pos < word.size()) {
      const size_t start = pos;
      next_code_point(word, pos);
      unit.clear();
      if (start > 0) unit += options_.continuing_subword_prefix;
      unit += word.substr(start, pos - start);
      if (pos == word.size()) unit += options_.end_of_word_suffix;
      auto it = vocab_.find(unit);
      if (it != vocab_.end()) {
        initial.push_back(it->second);
        last_was_unk = false;
      } else {
        push_unknown(unit, initial, last_was_unk);
      }
    }
  }
  const auto count = static_cast<int32_t>(initial.size());
  if (count <= 1) {
    out.insert(out.end(), initial.begin(), initial.end());
    return;
  }
  symbols.resize(initial.size());
  heap.clear();
  for (int32_t i = 0; i < count; ++i) {
    symbols[i] = Symbol{initial[i], i - 1, i + 1 < count ? i + 1 : -1, false};
    if (i + 1 < count) {
      if (const Merge* m = merges_.find(initial[i], initial[i + 1]))
        heap.push_back({m->rank, i, m->id});
    }
  }
  std::make_heap(heap.begin(), heap.end());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& current = symbols[top.pos];
    if (current.removed || current.next < 0) continue;
    Symbol& right = symbols[current.next];
    const Merge* still = merges_.find(current.id, right.id);
    if (still == nullptr || still->id != top.id) continue;  // a stale candidate
    current.id = top.id;
    right.removed = true;
    current.next = right.next;
    if (current.next >= 0) symbols[current.next].prev = top.pos;
    if (current.prev >= 0) {
      if (const Merge* m = merges_.find(symbols[current.prev].id, current.id)) {
        heap.push_back({m->rank, current.prev, m->id});
        std::push_heap(heap.begin(), heap.end());
      }
    }
    if (current.next >= 0) {
      if (const Merge* m = merges_.find(current.id, symbols[current.next].id)) {
        heap.push_back({m->rank, top.pos, m->id});
        std::push_heap(heap.begin(), heap.end());
      }
    }
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace vime::tokenizer
