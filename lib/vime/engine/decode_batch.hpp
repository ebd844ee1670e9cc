// The host side of a fixed-shape decode step (engine::DecodeRunner): the batch sizes CUDA graphs
// are captured for, and the packing of a step's rows, padded to such a size, into one int32
// staging buffer that goes to the device in one copy. No LibTorch: the scheduler's bookkeeping.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vime::engine {

// 1, 2, 4, 8, then every multiple of 16 below max_batch, then max_batch itself (vLLM's
// cudagraph capture sizes, coarser): padding costs at most 15 rows.
std::vector<int64_t> decode_buckets(int64_t max_batch);
// The smallest bucket >= batch, or -1 when batch exceeds the largest (buckets ascending).
int64_t bucket_for(const std::vector<int64_t>& buckets, int64_t batch);

// One sequence's decode row: the token at `position`, whose K/V go to its block table.
struct DecodeRow {
  int32_t token = 0;
  int64_t position = 0;
  std::span<const int32_t> block_table;
};

// The staging layout for up to `capacity` rows and block tables of `max_blocks` entries: four
// sections of `capacity` int32 (tokens, positions, slots, context lengths), then the block
// tables, row-major [rows, max_blocks].
class DecodeStaging {
 public:
  DecodeStaging(int64_t capacity, int64_t max_blocks, int64_t block_size);

  int64_t capacity() const { return capacity_; }
  int64_t max_blocks() const { return max_blocks_; }
  int64_t tokens_offset() const { return 0; }
  int64_t positions_offset() const { return capacity_; }
  int64_t slots_offset() const { return 2 * capacity_; }
  int64_t context_lens_offset() const { return 3 * capacity_; }
  int64_t block_tables_offset() const { return 4 * capacity_; }
  int64_t size() const { return 4 * capacity_ + capacity_ * max_blocks_; }
  // The prefix of the buffer a step of `rows` padded rows uses (what must reach the device).
  int64_t used(int64_t rows) const { return 4 * capacity_ + rows * max_blocks_; }

  // Whether `row` fits the layout: its position inside its block table, the table within
  // max_blocks.
  bool fits(const DecodeRow& row) const;
  // Writes `rows` then padding rows up to `padded` (token 0, slot -1, length 0, table of zeros)
  // into `out` (size() int32). Throws vime::Error when rows don't fit (check fits() first).
  void fill(std::span<const DecodeRow> rows, int64_t padded, int32_t* out) const;

 private:
  int64_t capacity_, max_blocks_, block_size_;
};

}  // namespace vime::engine
