#include "vime/engine/decode_batch.hpp"

#include <algorithm>
#include <string>

#include "vime/error.hpp"

namespace vime::engine {

std::vector<int64_t> decode_buckets(int64_t max_batch) {
  std::vector<int64_t> buckets;
  for (int64_t b : {1, 2, 4, 8})
    if (b < max_batch) buckets.push_back(b);
  for (int64_t b = 16; b < max_batch; b += 16) buckets.push_back(b);
  if (max_batch > 0) buckets.push_back(max_batch);
  return buckets;
}

int64_t bucket_for(const std::vector<int64_t>& buckets, int64_t batch) {
  auto it = std::lower_bound(buckets.begin(), buckets.end(), batch);
  return it == buckets.end() ? -1 : *it;
}

DecodeStaging::DecodeStaging(int64_t capacity, int64_t max_blocks, int64_t block_size)
    : capacity_(capacity), max_blocks_(max_blocks), block_size_(block_size) {
  if (capacity <= 0 || max_blocks <= 0 || block_size <= 0)
    throw Error("DecodeStaging: capacity, max_blocks and block_size must be positive");
}

bool DecodeStaging::fits(const DecodeRow& row) const {
  const int64_t blocks = static_cast<int64_t>(row.block_table.size());
  return row.position >= 0 && blocks <= max_blocks_ && row.position / block_size_ < blocks;
}

void DecodeStaging::fill(std::span<const DecodeRow> rows, int64_t padded, int32_t* out) const {
  const int64_t n = static_cast<int64_t>(rows.size());
  if (n > padded || padded > capacity_)
    throw Error("DecodeStaging: " + std::to_string(n) + " rows padded to " +
                std::to_string(padded) + " exceed the capacity of " + std::to_string(capacity_));
  std::fill(out, out + used(padded), 0);
  int32_t* tables = out + block_tables_offset();
  for (int64_t b = 0; b < padded; ++b) {
    if (b >= n) {
      out[slots_offset() + b] = -1;
      continue;
    }
    const DecodeRow& row = rows[b];
    if (!fits(row))
      throw Error("DecodeStaging: row " + std::to_string(b) + " at position " +
                  std::to_string(row.position) + " does not fit its block table of " +
                  std::to_string(row.block_table.size()) + " blocks (at most " +
                  std::to_string(max_blocks_) + ")");
    const int64_t block = row.block_table[row.position / block_size_];
    out[tokens_offset() + b] = row.token;
    out[positions_offset() + b] = static_cast<int32_t>(row.position);
    out[slots_offset() + b] =
        static_cast<int32_t>(block * block_size_ + row.position % block_size_);
    out[context_lens_offset() + b] = static_cast<int32_t>(row.position + 1);
    std::copy(row.block_table.begin(), row.block_table.end(), tables + b * max_blocks_);
  }
}

}  // namespace vime::engine
