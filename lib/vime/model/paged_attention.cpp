#include "vime/model/paged_attention.hpp"

#include <ATen/ATen.h>

#include <atomic>
#include <iostream>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "vime/core/torch_compat.hpp"
#include "vime/model/attention.hpp"

namespace vime {
namespace {

// Paged flash attention where at::_flash_attention_forward takes a block_table (recent LibTorch);
// the overload is chosen at compile time, so older LibTorch builds fall back to the gather path.
#if VIME_HAS_FLASH_VARLEN
template <typename T>
auto flash_with_block_table(int, const T& q, const T& k, const T& v, const T& cu_q, const T& cu_k,
                            int64_t max_q, int64_t max_k, double scale, const T& block_table)
    -> decltype(std::get<0>(at::_flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0,
                                                         true, false, scale, std::nullopt,
                                                         std::nullopt, std::nullopt, std::nullopt,
                                                         block_table)),
                at::Tensor()) {
  return std::get<0>(at::_flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0,
                                                  /*is_causal=*/true, false, scale, std::nullopt,
                                                  std::nullopt, std::nullopt, std::nullopt,
                                                  block_table));
}
#endif
template <typename T>
at::Tensor flash_with_block_table(long, const T&, const T&, const T&, const T&, const T&, int64_t,
                                  int64_t, double, const T&) {
  return at::Tensor();  // this LibTorch's flash attention takes no block table
}

#if VIME_HAS_FLASH_VARLEN
template <typename T>
auto takes_block_table(int)
    -> decltype(at::_flash_attention_forward(std::declval<T>(), std::declval<T>(),
                                             std::declval<T>(), std::declval<T>(),
                                             std::declval<T>(), 0, 0, 0.0, true, false, 1.0,
                                             std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                             std::declval<T>()),
                std::true_type{});
#endif
template <typename T>
std::false_type takes_block_table(long);

// Per sequence: its gathered context, a causal mask aligned at the end, softmax in fp32.
at::Tensor paged_math_attention(const at::Tensor& q, const at::Tensor& keys,
                                const at::Tensor& values, const PagedAttentionInfo& info,
                                double scale) {
  const int64_t heads = q.size(1), kv_heads = keys.size(1), groups = heads / kv_heads;
  std::vector<at::Tensor> outputs;
  int64_t k_begin = 0;
  for (size_t b = 0; b + 1 < info.cu_seqlens_q.size(); ++b) {
    const int64_t q_begin = info.cu_seqlens_q[b], n_q = info.cu_seqlens_q[b + 1] - q_begin;
    const int64_t n_k = info.seqlens_k[b];
    auto slots = info.gather_slots.narrow(0, k_begin, n_k);
    k_begin += n_k;
    if (n_q == 0) continue;
    auto qs = q.narrow(0, q_begin, n_q).transpose(0, 1);    // [heads, n_q, D]
    auto ks = keys.index_select(0, slots).transpose(0, 1);  // [kv_heads, n_k, D]
    auto vs = values.index_select(0, slots).transpose(0, 1);
    // Query heads j*groups .. (j+1)*groups-1 share kv head j: [kv_heads, groups * n_q, D].
    auto qg = qs.reshape({kv_heads, groups * n_q, qs.size(2)});
    auto scores = at::bmm(qg, ks.transpose(1, 2)).to(at::kFloat) * scale;  // [kv, g*n_q, n_k]
    auto query_pos = at::arange(n_q, q.options().dtype(at::kLong)) + (n_k - n_q);
    auto key_pos = at::arange(n_k, q.options().dtype(at::kLong));
    auto future = (key_pos.unsqueeze(0) > query_pos.unsqueeze(1)).repeat({groups, 1});
    scores = scores.masked_fill(future.unsqueeze(0), -std::numeric_limits<float>::infinity());
    auto probs = at::softmax(scores, -1).to(q.scalar_type());
    auto out = at::bmm(probs, vs).reshape({heads, n_q, qs.size(2)});
    outputs.push_back(out.transpose(0, 1));  // [n_q, heads, D]
  }
  if (outputs.empty()) return at::zeros_like(q);
  return at::cat(outputs, 0);
}

}  // namespace

bool flash_block_table_available(int64_t block_size) {
  // Flash attention 2 reads paged caches of blocks of 256n tokens only.
  return decltype(takes_block_table<at::Tensor>(0))::value && block_size % 256 == 0;
}

at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& key_cache,
                           const at::Tensor& value_cache, const PagedAttentionInfo& info,
                           double scale, PagedAttentionPath path) {
  const int64_t block_size = key_cache.size(1);
  const bool flash = flash_attention_available(q);
  // A LibTorch whose kernel turns the block table down at run time (its own checks) falls back to
  // the gather path for the rest of the process, with one line on stderr.
  static std::atomic<bool> block_table_refused{false};
  if (flash && path == PagedAttentionPath::kAuto && flash_block_table_available(block_size) &&
      !block_table_refused.load()) {
    try {
      auto out = flash_with_block_table<at::Tensor>(
          0, q.contiguous(), key_cache, value_cache, info.cu_seqlens_q_device,
          info.cu_seqlens_k_device, info.max_seqlen_q, info.max_seqlen_k, scale, info.block_tables);
      if (out.defined()) return out;
    } catch (const std::exception& e) {
      if (!block_table_refused.exchange(true))
        std::cerr << "vime: flash attention refused the block table (" << e.what()
                  << "); paged attention gathers blocks instead" << std::endl;
    }
  }
  auto keys = key_cache.view({-1, key_cache.size(2), key_cache.size(3)});
  auto values = value_cache.view({-1, value_cache.size(2), value_cache.size(3)});
#if VIME_HAS_FLASH_VARLEN
  if (flash) {
    auto k = keys.index_select(0, info.gather_slots);
    auto v = values.index_select(0, info.gather_slots);
    return std::get<0>(at::_flash_attention_forward(
        q.contiguous(), k, v, info.cu_seqlens_q_device, info.cu_seqlens_k_device, info.max_seqlen_q,
        info.max_seqlen_k, 0.0, /*is_causal=*/true, false, scale));
  }
#endif
  return paged_math_attention(q, keys, values, info, scale);
}

}  // namespace vime
