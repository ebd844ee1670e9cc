#include "vime/model/paged_forward.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "vime/model/layer_weights.hpp"
#include "vime/model/layers.hpp"
#include "vime/model/paged_mla.hpp"

namespace vime {
namespace {

at::Tensor long_tensor(const std::vector<int64_t>& values, const at::Device& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

}  // namespace

at::Tensor paged_forward(Model& model, PagedKvCache& cache, const std::vector<PagedSequence>& batch,
                         PagedAttentionPath path) {
  const ModelConfig& cfg = model.config();
  const auto device = model.device();
  const int64_t block_size = cache.block_size();
  std::vector<int64_t> tokens, positions, slots, last;
  PagedAttentionInfo info;
  info.cu_seqlens_q.push_back(0);
  std::vector<int64_t> cu_k{0};
  int64_t max_blocks = 1;
  for (const auto& s : batch) max_blocks = std::max<int64_t>(max_blocks, s.block_table->size());
  std::vector<int32_t> tables(batch.size() * max_blocks, 0);
  for (size_t b = 0; b < batch.size(); ++b) {
    const PagedSequence& s = batch[b];
    const auto& table = *s.block_table;
    for (int64_t p = s.begin; p < s.end; ++p) {
      tokens.push_back(s.tokens[p - s.tokens_offset]);
      positions.push_back(p);
      slots.push_back(table[p / block_size] * block_size + p % block_size);
    }
    std::copy(table.begin(), table.end(), tables.begin() + b * max_blocks);
    info.cu_seqlens_q.push_back(static_cast<int64_t>(tokens.size()));
    info.seqlens_k.push_back(s.end);
    cu_k.push_back(cu_k.back() + s.end);
    info.max_seqlen_q = std::max(info.max_seqlen_q, s.end - s.begin);
    info.max_seqlen_k = std::max(info.max_seqlen_k, s.end);
    if (s.wants_logits) last.push_back(static_cast<int64_t>(tokens.size()) - 1);
  }
  auto int32 = [&](const std::vector<int64_t>& v) {
    return at::tensor(std::vector<int32_t>(v.begin(), v.end()), at::TensorOptions().dtype(at::kInt))
        .to(device);
  };
  info.cu_seqlens_q_device = int32(info.cu_seqlens_q);
  info.cu_seqlens_k_device = int32(cu_k);
  info.block_tables = at::tensor(tables, at::TensorOptions().dtype(at::kInt))
                          .to(device)
                          .view({static_cast<int64_t>(batch.size()), max_blocks});
  {
    // The slot of each sequence's positions 0 .. end-1, packed, computed on the device.
    auto lens = long_tensor(info.seqlens_k, device);
    auto seq_of = at::repeat_interleave(lens, c10::optional<int64_t>(cu_k.back()));
    auto starts = long_tensor(std::vector<int64_t>(cu_k.begin(), cu_k.end() - 1), device);
    auto j = at::arange(cu_k.back(), lens.options()) - starts.index_select(0, seq_of);
    auto block = info.block_tables.to(at::kLong).view({-1}).index_select(
        0, seq_of * max_blocks + at::div(j, block_size, "floor"));
    info.gather_slots = block * block_size + at::remainder(j, block_size);
  }
  auto slots_t = long_tensor(slots, device);
  auto rope = rope_tables(model.inverse_frequencies(), long_tensor(positions, device),
                          model.dtype(), cfg.rope_interleaved, cfg.rope_attention_factor());
  const double scale = cfg.attention_scale();
  auto x = model.embed_tokens(long_tensor(tokens, device));
  for (int64_t layer = 0; layer < cfg.num_layers; ++layer) {
    // MLA: the latent cache, attended in latent space (paged_mla.hpp).
    const MlaAttentionFn latent = [&](const MlaQueryKv& in, const at::Tensor& kv_b) {
      return mla_paged_attention(in, kv_b, cache.keys(layer), slots_t, info, cfg);
    };
    x = decoder_layer(
        model.layer(layer), x, cfg, rope,
        [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
          const at::Tensor& keys = cache.keys(layer);
          const at::Tensor& values = cache.values(layer);
          keys.view({-1, keys.size(2), keys.size(3)}).index_copy_(0, slots_t, k);
          values.view({-1, values.size(2), values.size(3)}).index_copy_(0, slots_t, v);
          return paged_attention(q, keys, values, info, scale, path);
        },
        model.layer_parallel(), cfg.is_mla() ? &latent : nullptr);
  }
  auto hidden = x.index_select(0, long_tensor(last, device));
  return model.logits(rms_norm(hidden, model.final_norm(), cfg.rms_norm_eps));
}

}  // namespace vime
