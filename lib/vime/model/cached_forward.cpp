#include "vime/model/cached_forward.hpp"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "vime/model/layer_weights.hpp"
#include "vime/model/layers.hpp"

namespace vime {
namespace {

using at::indexing::Slice;

at::Tensor long_tensor(const std::vector<int64_t>& values, const at::Device& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

// Writes k, v ([tokens, kv_heads, head_dim]) at (row, position) of each token.
void write_cache(KvCache& cache, int64_t layer, const at::Tensor& rows, const at::Tensor& positions,
                 const at::Tensor& k, const at::Tensor& v) {
  at::Tensor keys = cache.keys(layer), values = cache.values(layer);  // handles to the storage
  keys.index_put_({rows, Slice(), positions}, k);
  values.index_put_({rows, Slice(), positions}, v);
}

}  // namespace

at::Tensor cached_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& lengths, int64_t max_length, double scale) {
  const int64_t batch = q.size(0), heads = q.size(1), head_dim = q.size(2);
  const int64_t kv_heads = keys.size(1), groups = heads / kv_heads;
  // Query heads j*groups .. (j+1)*groups-1 share kv head j (as repeat_interleave in the varlen
  // path), so GQA needs no copy of K/V: the batch of the bmm is (row, kv head).
  auto k = keys.narrow(0, 0, batch)
               .narrow(2, 0, max_length)
               .reshape({batch * kv_heads, max_length, head_dim});
  auto v = values.narrow(0, 0, batch)
               .narrow(2, 0, max_length)
               .reshape({batch * kv_heads, max_length, head_dim});
  auto qg = q.reshape({batch * kv_heads, groups, head_dim});
  auto scores = at::bmm(qg, k.transpose(1, 2)).to(at::kFloat) * scale;  // [B*kv, groups, L]
  auto beyond = at::arange(max_length, lengths.options()).unsqueeze(0) >= lengths.unsqueeze(1);
  scores = scores.view({batch, kv_heads, groups, max_length})
               .masked_fill(beyond.view({batch, 1, 1, max_length}),
                            -std::numeric_limits<float>::infinity());
  auto probs =
      at::softmax(scores, -1).to(q.scalar_type()).view({batch * kv_heads, groups, max_length});
  return at::bmm(probs, v).view({batch, heads, head_dim});
}

at::Tensor prefill_forward(Model& model, KvCache& cache,
                           const std::vector<std::vector<int64_t>>& sequences,
                           const std::vector<int64_t>& rows) {
  const ModelConfig& cfg = model.config();
  const auto device = model.device();
  auto batch = PackedBatch::pack(sequences, device);
  std::vector<int64_t> token_rows, last;
  for (size_t i = 0; i < sequences.size(); ++i) {
    token_rows.insert(token_rows.end(), sequences[i].size(), rows[i]);
    last.push_back(batch.varlen.cu_seqlens[i + 1] - 1);
  }
  auto rows_t = long_tensor(token_rows, device);
  auto rope = rope_tables(model.inverse_frequencies(), batch.positions, model.dtype());
  const double scale = 1.0 / std::sqrt(double(cfg.head_dim));
  auto x = model.embed_tokens(batch.tokens);
  for (int64_t layer = 0; layer < cfg.num_layers; ++layer) {
    x = decoder_layer(
        model.layer(layer), x, cfg, rope,
        [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
          write_cache(cache, layer, rows_t, batch.positions, k, v);
          return varlen_causal_attention(q, k, v, batch.varlen, scale);
        },
        model.layer_parallel());
  }
  auto hidden = x.index_select(0, long_tensor(last, device));
  return model.logits(rms_norm(hidden, model.final_norm(), cfg.rms_norm_eps));
}

at::Tensor decode_forward(Model& model, KvCache& cache, const std::vector<int64_t>& tokens,
                          const std::vector<int64_t>& positions) {
  const ModelConfig& cfg = model.config();
  const auto device = model.device();
  const int64_t batch = static_cast<int64_t>(tokens.size());
  int64_t max_length = 0;
  std::vector<int64_t> lengths;
  for (int64_t p : positions) {
    lengths.push_back(p + 1);
    max_length = std::max(max_length, p + 1);
  }
  auto positions_t = long_tensor(positions, device);
  auto lengths_t = long_tensor(lengths, device);
  auto rows_t = at::arange(batch, positions_t.options());
  auto rope = rope_tables(model.inverse_frequencies(), positions_t, model.dtype());
  const double scale = 1.0 / std::sqrt(double(cfg.head_dim));
  auto x = model.embed_tokens(long_tensor(tokens, device));
  for (int64_t layer = 0; layer < cfg.num_layers; ++layer) {
    x = decoder_layer(
        model.layer(layer), x, cfg, rope,
        [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
          write_cache(cache, layer, rows_t, positions_t, k, v);
          return cached_attention(q, cache.keys(layer), cache.values(layer), lengths_t, max_length,
                                  scale);
        },
        model.layer_parallel());
  }
  return model.logits(rms_norm(x, model.final_norm(), cfg.rms_norm_eps));
}

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
  auto rope =
      rope_tables(model.inverse_frequencies(), long_tensor(positions, device), model.dtype());
  const double scale = 1.0 / std::sqrt(double(cfg.head_dim));
  auto x = model.embed_tokens(long_tensor(tokens, device));
  for (int64_t layer = 0; layer < cfg.num_layers; ++layer) {
    x = decoder_layer(
        model.layer(layer), x, cfg, rope,
        [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
          const at::Tensor& keys = cache.keys(layer);
          const at::Tensor& values = cache.values(layer);
          keys.view({-1, keys.size(2), keys.size(3)}).index_copy_(0, slots_t, k);
          values.view({-1, values.size(2), values.size(3)}).index_copy_(0, slots_t, v);
          return paged_attention(q, keys, values, info, scale, path);
        },
        model.layer_parallel());
  }
  auto hidden = x.index_select(0, long_tensor(last, device));
  return model.logits(rms_norm(hidden, model.final_norm(), cfg.rms_norm_eps));
}

}  // namespace vime
