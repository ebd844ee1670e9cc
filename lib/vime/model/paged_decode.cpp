#include "vime/model/paged_decode.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "vime/error.hpp"
#include "vime/model/layer_weights.hpp"
#include "vime/model/layers.hpp"
#include "vime/model/paged_decode_kernel.hpp"
#include "vime/model/paged_mla.hpp"

#if defined(VIME_HAS_CUDA_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace vime {
namespace {

#if defined(VIME_HAS_CUDA_KERNELS)
cuda_kernels::ElementType element_type(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return cuda_kernels::ElementType::kFloat;
    case at::kHalf:
      return cuda_kernels::ElementType::kHalf;
    case at::kBFloat16:
      return cuda_kernels::ElementType::kBFloat16;
    default:
      throw Error("paged decode: no CUDA kernel for this dtype");
  }
}

void* current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}
#endif

bool kernel_dtype(at::ScalarType type) {
  return type == at::kFloat || type == at::kHalf || type == at::kBFloat16;
}

}  // namespace

bool paged_decode_kernel_available(const at::Tensor& q, int64_t kv_heads) {
#if defined(VIME_HAS_CUDA_KERNELS)
  const int64_t head_dim = q.size(-1), heads = q.size(-2);
  return q.is_cuda() && kernel_dtype(q.scalar_type()) && (head_dim == 64 || head_dim == 128) &&
         kv_heads > 0 && heads % kv_heads == 0 && heads / kv_heads <= 8;
#else
  (void)q;
  (void)kv_heads;
  (void)kernel_dtype;
  return false;
#endif
}

at::Tensor paged_decode_attention_reference(const at::Tensor& q, const at::Tensor& key_cache,
                                            const at::Tensor& value_cache,
                                            const at::Tensor& block_tables,
                                            const at::Tensor& context_lens, double scale) {
  const int64_t batch = q.size(0), heads = q.size(1), head_dim = q.size(2);
  const int64_t kv_heads = key_cache.size(2), groups = heads / kv_heads;
  const int64_t max_blocks = block_tables.size(1), length = max_blocks * key_cache.size(1);
  auto index = block_tables.to(at::kLong).reshape({-1});
  auto gather = [&](const at::Tensor& cache) {  // [batch, kv_heads, length, head_dim] fp32
    return cache.index_select(0, index)
        .view({batch, length, kv_heads, head_dim})
        .permute({0, 2, 1, 3})
        .to(at::kFloat);
  };
  auto keys = gather(key_cache), values = gather(value_cache);
  auto qg = q.to(at::kFloat).view({batch, kv_heads, groups, head_dim});
  auto scores = at::matmul(qg, keys.transpose(2, 3)) * scale;  // [batch, kv, groups, length]
  auto beyond = at::arange(length, context_lens.options().dtype(at::kLong)).unsqueeze(0) >=
                context_lens.to(at::kLong).unsqueeze(1);
  scores = scores.masked_fill(beyond.view({batch, 1, 1, length}),
                              -std::numeric_limits<float>::infinity());
  auto probs = at::nan_to_num(at::softmax(scores, -1), 0.0);  // empty rows: zeros
  return at::matmul(probs, values).view({batch, heads, head_dim}).to(q.scalar_type());
}

at::Tensor paged_decode_attention(const at::Tensor& q, const at::Tensor& key_cache,
                                  const at::Tensor& value_cache, const at::Tensor& block_tables,
                                  const at::Tensor& context_lens, double scale,
                                  const PagedDecodeKernel& kernel) {
#if defined(VIME_HAS_CUDA_KERNELS)
  const int64_t kv_heads = key_cache.size(2);
  if (paged_decode_kernel_available(q, kv_heads) && key_cache.is_contiguous() &&
      value_cache.is_contiguous() && key_cache.scalar_type() == q.scalar_type()) {
    auto qc = q.contiguous();
    auto tables = block_tables.contiguous();
    auto lens = context_lens.contiguous();
    auto out = at::empty_like(qc);
    const int64_t batch = q.size(0), heads = q.size(1), head_dim = q.size(2);
    const int64_t block_size = key_cache.size(1), max_blocks = tables.size(1);
    const int64_t splits =
        kernel.kv_splits > 0
            ? std::min(kernel.kv_splits, cuda_kernels::kMaxDecodeSplits)
            : cuda_kernels::choose_decode_splits(
                  batch, kv_heads, max_blocks * block_size,
                  at::cuda::getDeviceProperties(q.device().index())->multiProcessorCount);
    at::Tensor workspace;
    if (splits > 1)
      workspace =
          at::empty({cuda_kernels::paged_decode_workspace_floats(batch, heads, head_dim, splits)},
                    q.options().dtype(at::kFloat));
    const bool launched = cuda_kernels::paged_decode_attention(
        out.data_ptr(), qc.data_ptr(), key_cache.data_ptr(), value_cache.data_ptr(),
        tables.data_ptr<int32_t>(), lens.data_ptr<int32_t>(), static_cast<int>(batch),
        static_cast<int>(kv_heads), static_cast<int>(heads / kv_heads), static_cast<int>(head_dim),
        static_cast<int>(block_size), static_cast<int>(max_blocks), static_cast<float>(scale),
        element_type(q.scalar_type()), current_stream(q), static_cast<int>(splits),
        splits > 1 ? workspace.data_ptr<float>() : nullptr,
        static_cast<int>(kernel.lanes_per_position));
    if (launched) return out;
  }
#else
  (void)kernel;
#endif
  return paged_decode_attention_reference(q, key_cache, value_cache, block_tables, context_lens,
                                          scale);
}

void write_paged_kv(const at::Tensor& key_cache, const at::Tensor& value_cache, const at::Tensor& k,
                    const at::Tensor& v, const at::Tensor& slots) {
#if defined(VIME_HAS_CUDA_KERNELS)
  const int64_t row = key_cache.size(2) * key_cache.size(3);
  if (key_cache.is_cuda() && kernel_dtype(key_cache.scalar_type()) &&
      k.scalar_type() == key_cache.scalar_type() && v.scalar_type() == key_cache.scalar_type()) {
    auto kc = k.reshape({k.size(0), row}).contiguous();
    auto vc = v.reshape({v.size(0), row}).contiguous();
    auto s = slots.contiguous();
    cuda_kernels::paged_kv_write(key_cache.data_ptr(), value_cache.data_ptr(), kc.data_ptr(),
                                 vc.data_ptr(), s.data_ptr<int32_t>(), static_cast<int>(kc.size(0)),
                                 static_cast<int>(row), row, row,
                                 element_type(key_cache.scalar_type()), current_stream(k));
    return;
  }
#endif
  // Plain path (CPU): the rows with a slot; finding them syncs, which only the CPU can afford.
  auto keep = at::nonzero(slots >= 0).reshape({-1});
  auto index = slots.to(at::kLong).index_select(0, keep);
  at::Tensor keys = key_cache.view({-1, key_cache.size(2), key_cache.size(3)});
  at::Tensor values = value_cache.view({-1, value_cache.size(2), value_cache.size(3)});
  keys.index_copy_(0, index, k.index_select(0, keep).to(keys.scalar_type()));
  values.index_copy_(0, index, v.index_select(0, keep).to(values.scalar_type()));
}

at::Tensor paged_decode_forward(Model& model, PagedKvCache& cache, const PagedDecodeInputs& in) {
  const ModelConfig& cfg = model.config();
  auto rope = rope_tables(model.inverse_frequencies(), in.positions, model.dtype(),
                          cfg.rope_interleaved, cfg.rope_attention_factor());
  const double scale = cfg.attention_scale();
  // Under tensor parallelism: this rank's heads and shards, the collectives on the current stream
  // (captured with the rest).
  auto x = model.embed_tokens(in.tokens.to(at::kLong));
  for (int64_t layer = 0; layer < cfg.num_layers; ++layer) {
    const MlaAttentionFn latent = [&](const MlaQueryKv& q, const at::Tensor& kv_b) {
      return mla_decode_attention(q, kv_b, cache.keys(layer), in.slots, in.block_tables,
                                  in.context_lens, cfg);
    };
    x = decoder_layer(
        model.layer(layer), x, cfg, rope,
        [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
          write_paged_kv(cache.keys(layer), cache.values(layer), k, v, in.slots);
          return paged_decode_attention(q, cache.keys(layer), cache.values(layer), in.block_tables,
                                        in.context_lens, scale, in.kernel);
        },
        model.layer_parallel(), cfg.is_mla() ? &latent : nullptr);
  }
  return model.logits(rms_norm(x, model.final_norm(), cfg.rms_norm_eps));
}

}  // namespace vime
