#include "vime/model/paged_mla.hpp"

#include <ATen/ATen.h>

#include <limits>
#include <vector>

#include "vime/model/paged_decode.hpp"

namespace vime {

at::Tensor mla_cache_rows(const MlaQueryKv& in) {
  return at::cat({in.latent, in.k_rope.squeeze(1)}, -1);
}

at::Tensor mla_paged_attention(const MlaQueryKv& in, const at::Tensor& kv_b,
                               const at::Tensor& cache, const at::Tensor& slots,
                               const PagedAttentionInfo& info, const ModelConfig& config) {
  const int64_t width = cache.size(-1), rank = config.mla.kv_lora_rank;
  auto rows = cache.view({-1, width});
  rows.index_copy_(0, slots, mla_cache_rows(in).to(cache.scalar_type()));
  auto q = mla_absorbed_query(in, kv_b, config);  // [T, heads, width]
  const double scale = config.attention_scale();
  std::vector<at::Tensor> outputs;
  int64_t k_begin = 0;
  for (size_t b = 0; b + 1 < info.cu_seqlens_q.size(); ++b) {
    const int64_t q_begin = info.cu_seqlens_q[b], n_q = info.cu_seqlens_q[b + 1] - q_begin;
    const int64_t n_k = info.seqlens_k[b];
    auto context = rows.index_select(0, info.gather_slots.narrow(0, k_begin, n_k));  // [n_k, W]
    k_begin += n_k;
    if (n_q == 0) continue;
    auto qs = q.narrow(0, q_begin, n_q).transpose(0, 1);               // [heads, n_q, W]
    auto scores = at::matmul(qs, context.t()).to(at::kFloat) * scale;  // [heads, n_q, n_k]
    auto query_pos = at::arange(n_q, q.options().dtype(at::kLong)) + (n_k - n_q);
    auto key_pos = at::arange(n_k, q.options().dtype(at::kLong));
    auto future = key_pos.unsqueeze(0) > query_pos.unsqueeze(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    auto probs = at::softmax(scores, -1).to(q.scalar_type());
    outputs.push_back(at::matmul(probs, context.narrow(1, 0, rank)).transpose(0, 1));
  }
  auto out_latent = outputs.empty() ? at::zeros({q.size(0), q.size(1), rank}, q.options())
                                    : at::cat(outputs, 0);  // [T, heads, rank]
  return mla_absorbed_output(out_latent, kv_b, config);
}

at::Tensor mla_decode_attention(const MlaQueryKv& in, const at::Tensor& kv_b,
                                const at::Tensor& cache, const at::Tensor& slots,
                                const at::Tensor& block_tables, const at::Tensor& context_lens,
                                const ModelConfig& config) {
  auto rows = mla_cache_rows(in).to(cache.scalar_type()).unsqueeze(1);  // [batch, 1, W]
  write_paged_kv(cache, cache, rows, rows, slots);
  auto q = mla_absorbed_query(in, kv_b, config);  // [batch, heads, W]
  const int64_t batch = q.size(0), width = cache.size(-1), rank = config.mla.kv_lora_rank;
  const int64_t length = block_tables.size(1) * cache.size(1);
  auto context = cache.index_select(0, block_tables.to(at::kLong).reshape({-1}))
                     .view({batch, length, width})
                     .to(at::kFloat);
  auto scores = at::matmul(q.to(at::kFloat), context.transpose(1, 2)) * config.attention_scale();
  auto beyond = at::arange(length, context_lens.options().dtype(at::kLong)).unsqueeze(0) >=
                context_lens.to(at::kLong).unsqueeze(1);  // [batch, length]
  scores = scores.masked_fill(beyond.unsqueeze(1), -std::numeric_limits<float>::infinity());
  auto probs = at::nan_to_num(at::softmax(scores, -1), 0.0);  // padding rows: zeros
  auto out_latent = at::matmul(probs, context.narrow(2, 0, rank)).to(q.scalar_type());
  return mla_absorbed_output(out_latent, kv_b, config);
}

}  // namespace vime
