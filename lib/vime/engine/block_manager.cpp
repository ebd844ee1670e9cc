#include "vime/engine/block_manager.hpp"

#include <algorithm>

#include "vime/error.hpp"

namespace vime::engine {
namespace {

constexpr uint64_t kRoot = 0x6A09E667F3BCC908ull;  // the parent hash of block 0
constexpr uint64_t kFnvPrime = 0x100000001B3ull;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The running state of a block's content hash: fold the tokens in one at a time; a full block's
// key and a partial block's key finish it differently, so the two never collide by construction.
uint64_t fold(uint64_t state, int32_t token) {
  return (state ^ static_cast<uint32_t>(token)) * kFnvPrime;
}
uint64_t full_key(uint64_t state) { return splitmix64(state ^ 0xF011ull); }
uint64_t partial_key(uint64_t state, int64_t length) {
  return splitmix64(state ^ (0x9A27ull << 16) ^ static_cast<uint64_t>(length));
}
uint64_t start(uint64_t parent) { return splitmix64(parent); }

bool same_tokens(const std::vector<int32_t>& stored, std::span<const int32_t> tokens) {
  return std::equal(stored.begin(), stored.end(), tokens.begin(), tokens.end());
}

}  // namespace

BlockManager::BlockManager(int64_t block_size, int64_t max_blocks, int64_t initial_blocks)
    : block_size_(block_size), max_blocks_(max_blocks) {
  if (block_size <= 0 || max_blocks <= 0)
    throw Error("BlockManager: block_size and max_blocks must be positive");
  grow(std::min(std::max<int64_t>(initial_blocks, 1), max_blocks));
}

bool BlockManager::grow(int64_t needed_free) {
  const int64_t missing = needed_free - free_blocks();
  if (missing <= 0) return true;
  if (num_blocks() + missing > max_blocks_) return false;
  const int64_t target = std::min(max_blocks_, std::max(num_blocks() + missing, 2 * num_blocks()));
  while (num_blocks() < target) {
    const auto id = static_cast<int32_t>(blocks_.size());
    blocks_.emplace_back();
    blocks_.back().free_at = free_.insert(free_.begin(), id);
  }
  return true;
}

int32_t BlockManager::take_free() {
  const int32_t id = free_.front();
  free_.pop_front();
  unpublish(id);
  Block& b = blocks_[id];
  b.refs = 1;
  b.computed = false;
  b.has_chain = false;
  return id;
}

void BlockManager::add_ref(int32_t id) {
  Block& b = blocks_[id];
  if (b.refs++ == 0) free_.erase(b.free_at);
}

void BlockManager::drop_ref(int32_t id, bool evict_first) {
  Block& b = blocks_[id];
  if (--b.refs > 0) return;
  if (!b.computed) unpublish(id);  // its content never arrived (a failed step)
  const bool cached = b.full_published || b.partial_published;
  b.free_at =
      (cached && !evict_first) ? free_.insert(free_.end(), id) : free_.insert(free_.begin(), id);
}

void BlockManager::unpublish_full(int32_t id) {
  Block& b = blocks_[id];
  if (b.full_published) full_.erase(b.chain);
  b.full_published = false;
  if (!b.partial_published) b.tokens.clear();
}

void BlockManager::unpublish_partial(int32_t id) {
  Block& b = blocks_[id];
  if (b.partial_published) partial_.erase(b.partial_key);
  b.partial_published = false;
  if (!b.full_published) b.tokens.clear();
}

void BlockManager::unpublish(int32_t id) {
  unpublish_full(id);
  unpublish_partial(id);
}

uint64_t BlockManager::parent_chain(const std::vector<int32_t>& table, int64_t k) const {
  return k == 0 ? kRoot : blocks_[table[k - 1]].chain;
}

std::optional<int64_t> BlockManager::match_prefix(std::span<const int32_t> tokens,
                                                  std::vector<int32_t>& table) {
  const auto n = static_cast<int64_t>(tokens.size());
  std::vector<int32_t> found;
  uint64_t parent = kRoot;
  int64_t matched = 0;
  bool pending = false;
  for (; matched + block_size_ <= n; matched += block_size_) {
    auto content = tokens.subspan(matched, block_size_);
    uint64_t state = start(parent);
    for (int32_t t : content) state = fold(state, t);
    const auto it = full_.find(full_key(state));
    if (it == full_.end()) break;
    const Block& b = blocks_[it->second];
    if (b.parent != parent || !same_tokens(b.tokens, content)) break;
    if (!b.computed) {
      pending = true;
      break;
    }
    found.push_back(it->second);
    parent = b.chain;
  }
  if (!pending) {
    // The longest partial publication under this parent: one pass folds every prefix length.
    const int64_t longest = std::min(block_size_ - 1, n - matched);
    uint64_t state = start(parent);
    int32_t best = -1;
    int64_t best_length = 0;
    for (int64_t t = 1; t <= longest; ++t) {
      state = fold(state, tokens[matched + t - 1]);
      const auto it = partial_.find(partial_key(state, t));
      if (it == partial_.end()) continue;
      const Block& b = blocks_[it->second];
      if (b.parent == parent && b.partial_length == t &&
          same_tokens(std::vector<int32_t>(b.tokens.begin(), b.tokens.begin() + t),
                      tokens.subspan(matched, t))) {
        best = it->second;
        best_length = t;
      }
    }
    if (best >= 0) {
      found.push_back(best);
      matched += best_length;
    }
  }
  if (pending) return std::nullopt;
  for (int32_t id : found) {
    add_ref(id);
    table.push_back(id);
  }
  return matched;
}

bool BlockManager::make_writable(std::vector<int32_t>& table, int64_t begin, int64_t end,
                                 std::vector<BlockCopy>& copies) {
  if (end <= begin) return true;
  const int64_t blocks_needed = (end + block_size_ - 1) / block_size_;
  const int64_t first = begin / block_size_;
  const int64_t have = static_cast<int64_t>(table.size());
  int64_t shared = 0;
  for (int64_t k = first; k < std::min(have, blocks_needed); ++k)
    shared += blocks_[table[k]].refs > 1;
  const int64_t fresh = std::max<int64_t>(0, blocks_needed - have);
  if (!grow(shared + fresh)) return false;
  for (int64_t k = first; k < std::min(have, blocks_needed); ++k) {
    const int32_t id = table[k];
    const int64_t offset = std::max(begin - k * block_size_, int64_t{0});
    if (blocks_[id].refs > 1) {
      const int32_t copy = take_free();
      copies.push_back({id, copy});
      ++copies_made_;
      drop_ref(id, false);
      table[k] = copy;
      continue;
    }
    // Written in place: publications that cover the positions from `offset` on go stale.
    Block& b = blocks_[id];
    unpublish_full(id);
    b.has_chain = false;
    if (b.partial_published && offset < b.partial_length) unpublish_partial(id);
  }
  for (int64_t k = have; k < blocks_needed; ++k) table.push_back(take_free());
  return true;
}

void BlockManager::publish_full(std::span<const int32_t> tokens, const std::vector<int32_t>& table,
                                int64_t begin, int64_t end) {
  const int64_t full = std::min<int64_t>(end / block_size_, static_cast<int64_t>(table.size()));
  for (int64_t k = 0; k < full; ++k) {
    Block& b = blocks_[table[k]];
    if (b.has_chain) continue;
    const uint64_t parent = parent_chain(table, k);
    auto content = tokens.subspan(k * block_size_, block_size_);
    uint64_t state = start(parent);
    for (int32_t t : content) state = fold(state, t);
    b.chain = full_key(state);
    b.has_chain = true;
    if (full_.count(b.chain)) continue;  // another block holds the same content
    if (!b.partial_published) {
      b.parent = parent;
      b.tokens.assign(content.begin(), content.end());
    } else if (b.parent != parent) {
      continue;
    } else {
      b.tokens.assign(content.begin(), content.end());  // extends the partial content
    }
    full_[b.chain] = table[k];
    b.full_published = true;
    if ((k + 1) * block_size_ > begin) b.computed = false;  // this step writes into it
  }
}

void BlockManager::mark_computed(std::span<const int32_t> tokens, const std::vector<int32_t>& table,
                                 int64_t begin, int64_t end, int64_t prompt_length) {
  if (end <= begin) return;
  const int64_t last = std::min<int64_t>((end - 1) / block_size_ + 1, table.size());
  for (int64_t k = begin / block_size_; k < last; ++k) blocks_[table[k]].computed = true;
  const int64_t tail = prompt_length % block_size_;
  if (tail == 0 || begin >= prompt_length || end < prompt_length) return;
  const int64_t k = prompt_length / block_size_;
  if (k >= static_cast<int64_t>(table.size())) return;
  Block& b = blocks_[table[k]];
  if (b.partial_published || b.full_published) return;
  const uint64_t parent = parent_chain(table, k);
  if (k > 0 && !blocks_[table[k - 1]].has_chain) return;
  auto content = tokens.subspan(k * block_size_, tail);
  uint64_t state = start(parent);
  for (int32_t t : content) state = fold(state, t);
  const uint64_t key = partial_key(state, tail);
  if (partial_.count(key)) return;
  b.parent = parent;
  b.tokens.assign(content.begin(), content.end());
  b.partial_length = tail;
  b.partial_key = key;
  b.partial_published = true;
  partial_[key] = table[k];
}

void BlockManager::release(std::vector<int32_t>& table) {
  // Last blocks first to the eviction end: a prefix outlives its continuations.
  for (auto it = table.rbegin(); it != table.rend(); ++it) drop_ref(*it, false);
  table.clear();
}

void BlockManager::reset_prefix_cache() {
  for (int32_t id = 0; id < static_cast<int32_t>(blocks_.size()); ++id) unpublish(id);
}

void BlockManager::reset() {
  full_.clear();
  partial_.clear();
  free_.clear();
  for (int32_t id = 0; id < static_cast<int32_t>(blocks_.size()); ++id) {
    blocks_[id] = Block{};
    blocks_[id].free_at = free_.insert(free_.end(), id);
  }
}

}  // namespace vime::engine
