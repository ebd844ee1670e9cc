// The paged KV cache's bookkeeping (no tensors): which fixed-size block of the cache holds which
// positions of which sequence, reference counts, and prefix sharing.
//
// A sequence owns a block table: its positions [k * block_size, (k + 1) * block_size) live in
// block table[k]. A block that a sequence's positions fill completely is published under a chained
// content hash (its tokens and its parent's hash, as vLLM and nano-vllm do); the block holding the
// end of a prompt is also published under a hash of that partial content once computed. Another
// sequence with the same prefix takes references on those blocks instead of computing them again
// (match_prefix), and copies a shared block before writing into it (copy-on-write, in
// make_writable): so the n samples of a GRPO group prefill their prompt once and part at the
// first position where they differ. Released blocks keep their content and stay matchable until a
// new allocation reuses them, least recently released first.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace vime::engine {

struct BlockCopy {
  int32_t from = 0, to = 0;
};

class BlockManager {
 public:
  // Starts with `initial_blocks` blocks and grows (doubling) up to `max_blocks` on demand.
  BlockManager(int64_t block_size, int64_t max_blocks, int64_t initial_blocks);

  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return static_cast<int64_t>(blocks_.size()); }
  int64_t max_blocks() const { return max_blocks_; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  int64_t used_blocks() const { return num_blocks() - free_blocks(); }

  // For a sequence without blocks: references the longest run of published blocks that holds a
  // prefix of `tokens` (full blocks, then at most one partial block), appends them to `table` and
  // returns how many tokens they hold. nullopt, with nothing taken, when that run reaches a block
  // that the current step is still computing: the caller tries again after the step.
  std::optional<int64_t> match_prefix(std::span<const int32_t> tokens, std::vector<int32_t>& table);

  // Makes positions [begin, end) of the sequence writable: appends blocks up to `end` and replaces
  // each shared block in the range by a private copy (recorded in `copies`, for the caller to copy
  // the tensors). Returns false, changing nothing, when the blocks left do not suffice.
  bool make_writable(std::vector<int32_t>& table, int64_t begin, int64_t end,
                     std::vector<BlockCopy>& copies);

  // At scheduling, for a step that computes positions [begin, end): the blocks that positions
  // [0, end) fill completely are published; those the step writes into count as not computed
  // until mark_computed (a match on them waits for the step).
  void publish_full(std::span<const int32_t> tokens, const std::vector<int32_t>& table,
                    int64_t begin, int64_t end);
  // After the forward computed positions [begin, end): their blocks are computed; when `end`
  // reaches the prompt's end and the prompt ends inside a block, that block is published under
  // its partial content.
  void mark_computed(std::span<const int32_t> tokens, const std::vector<int32_t>& table,
                     int64_t begin, int64_t end, int64_t prompt_length);

  // Drops the sequence's references and clears its table.
  void release(std::vector<int32_t>& table);
  // Forgets every published hash (after a weight update the cached K/V are stale); blocks in use
  // stay with their sequences.
  void reset_prefix_cache();
  // Every block free and unpublished (release_memory: no sequence holds any block).
  void reset();

  int64_t copies_made() const { return copies_made_; }

 private:
  struct Block {
    int32_t refs = 0;
    bool computed = false;
    bool has_chain = false;  // chain: the hash of the full content, valid once the block is full
    uint64_t chain = 0;
    bool full_published = false, partial_published = false;
    uint64_t parent = 0;          // the parent's chain hash, checked on a match
    std::vector<int32_t> tokens;  // the published content (full or partial), checked too
    int64_t partial_length = 0;   // positions the partial publication covers
    uint64_t partial_key = 0;
    std::list<int32_t>::iterator free_at;  // valid while refs == 0
  };

  uint64_t parent_chain(const std::vector<int32_t>& table, int64_t k) const;
  bool grow(int64_t needed_free);
  int32_t take_free();
  void add_ref(int32_t id);
  void drop_ref(int32_t id, bool evict_first);
  void unpublish(int32_t id);
  void unpublish_full(int32_t id);
  void unpublish_partial(int32_t id);

  int64_t block_size_, max_blocks_;
  std::vector<Block> blocks_;
  std::list<int32_t> free_;  // front: taken first (unpublished ones first, then LRU)
  std::unordered_map<uint64_t, int32_t> full_, partial_;
  int64_t copies_made_ = 0;
};

}  // namespace vime::engine
