#include "vime/train/context_parallel_rows.hpp"

#include <ATen/ATen.h>

#include <vector>

namespace vime::train {
namespace {

CpRows on_device(const std::vector<int64_t>& rows, const std::vector<int64_t>& dest,
                 int64_t num_whole, const at::Device& device) {
  const auto options = at::TensorOptions().dtype(at::kLong);
  return {
      at::tensor(rows, options).to(device), {}, at::tensor(dest, options).to(device), num_whole};
}

}  // namespace

CpRows cp_response_rows(const PackedBatch& shard, const ResponseRows& whole) {
  const auto& layout = *shard.context_parallel;
  // The response index each whole-batch row predicts, or -1.
  std::vector<int64_t> response_of(layout.num_global_rows, -1);
  auto host_rows = whole.rows.to(at::kCPU).contiguous();
  const int64_t* r = host_rows.data_ptr<int64_t>();
  for (int64_t k = 0; k < host_rows.numel(); ++k) response_of[r[k]] = k;
  std::vector<int64_t> rows, dest;
  for (size_t i = 0; i < layout.global_rows.size(); ++i) {
    const int64_t g = layout.global_rows[i];
    if (g >= 0 && response_of[g] >= 0) {
      rows.push_back(static_cast<int64_t>(i));
      dest.push_back(response_of[g]);
    }
  }
  auto out = on_device(rows, dest, host_rows.numel(), shard.tokens.device());
  out.targets = whole.targets.index_select(0, out.dest.to(whole.targets.device()));
  return out;
}

CpRows cp_token_rows(const PackedBatch& shard) {
  const auto& layout = *shard.context_parallel;
  std::vector<int64_t> rows, dest;
  for (size_t i = 0; i < layout.global_rows.size(); ++i) {
    if (layout.global_rows[i] < 0) continue;
    rows.push_back(static_cast<int64_t>(i));
    dest.push_back(layout.global_rows[i]);
  }
  return on_device(rows, dest, layout.num_global_rows, shard.tokens.device());
}

}  // namespace vime::train
