#include "vime/engine/decode_graph.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <vector>

#include "vime/engine/routing_record.hpp"
#include "vime/error.hpp"
#include "vime/model/layer_weights.hpp"
#include "vime/model/moe.hpp"
#include "vime/model/paged_decode.hpp"

#if defined(VIME_HAS_CUDA_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define VIME_DECODE_GRAPHS 1
#endif

namespace vime::engine {

struct DecodeGraphRunner::Impl {
  Impl(Model& m, PagedKvCache& c, int64_t max_batch, int64_t max_blocks, bool want_graphs,
       PagedDecodeKernel decode_kernel)
      : model(m),
        cache(c),
        buckets(decode_buckets(max_batch)),
        staging(max_batch, max_blocks, c.block_size()),
        kernel(decode_kernel) {
    graphs = want_graphs && m.device().is_cuda();
    // An MoE layer whose grouped GEMM falls back to a loop reads expert offsets on the host.
    for (int64_t l = 0; l < m.config().num_layers; ++l) {
      const auto& moe = m.layer(l).moe;
      if (moe.defined() && !moe_block_is_capturable(moe)) graphs = false;
    }
#if !defined(VIME_DECODE_GRAPHS)
    graphs = false;
#endif
    padded = graphs;
    auto host_options = at::TensorOptions().dtype(at::kInt);
    if (m.device().is_cuda()) host_options = host_options.pinned_memory(true);
    host = at::empty({staging.size()}, host_options);
    device = at::zeros({staging.size()}, at::TensorOptions().dtype(at::kInt).device(m.device()));
    if (m.config().is_moe()) {
      const int64_t rows = std::max(buckets.empty() ? int64_t{0} : buckets.back(), max_batch);
      routed = at::zeros({rows, m.config().num_layers, m.config().moe.num_experts_per_tok},
                         at::TensorOptions().dtype(at::kInt).device(m.device()));
    }
  }

  // The decode forward of `bucket` rows; an MoE model's routing goes into `routed` (in a graph:
  // the replay writes it).
  at::Tensor forward(const PagedDecodeInputs& in, int64_t bucket) {
    if (!routed.defined()) return paged_decode_forward(model, cache, in);
    MoeRouting routing;
    at::Tensor logits;
    {
      MoeRoutingScope scope(&routing);
      logits = paged_decode_forward(model, cache, in);
    }
    routed.narrow(0, 0, bucket)
        .copy_(routing_rows(model.config(), routing.chosen, bucket, model.device()));
    return logits;
  }

  PagedDecodeInputs inputs(int64_t rows) const {
    PagedDecodeInputs in;
    in.tokens = device.narrow(0, staging.tokens_offset(), rows);
    in.positions = device.narrow(0, staging.positions_offset(), rows);
    in.slots = device.narrow(0, staging.slots_offset(), rows);
    in.context_lens = device.narrow(0, staging.context_lens_offset(), rows);
    in.block_tables = device.narrow(0, staging.block_tables_offset(), rows * staging.max_blocks())
                          .view({rows, staging.max_blocks()});
    in.kernel = kernel;
    return in;
  }

  // The addresses a captured graph reads: every weight and every layer's K/V cache.
  std::vector<const void*> addresses() const {
    std::vector<const void*> out;
    for (const auto& [name, t] : model.named_parameters()) out.push_back(t.data_ptr());
    for (int64_t l = 0; l < model.config().num_layers; ++l) {
      out.push_back(cache.keys(l).data_ptr());
      out.push_back(cache.values(l).data_ptr());
    }
    return out;
  }

  int64_t bucket_of(int64_t rows) const { return padded ? bucket_for(buckets, rows) : rows; }
  bool will_capture(int64_t rows) const {
#if defined(VIME_DECODE_GRAPHS)
    if (!graphs) return false;
    return addresses() != captured_addresses || captured.count(bucket_of(rows)) == 0;
#else
    (void)rows;
    return false;
#endif
  }
  at::Tensor run(std::span<const DecodeRow> rows, std::optional<bool> capture_now);
#if defined(VIME_DECODE_GRAPHS)
  struct Captured {
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    at::Tensor logits;
  };
  Captured capture(int64_t bucket);
  void drop_graphs() {
    captured.clear();
    pool = {0, 0};  // the next capture starts a fresh pool
  }
  std::map<int64_t, Captured> captured;
  decltype(at::cuda::graph_pool_handle()) pool{0, 0};
  std::vector<const void*> captured_addresses;
#endif

  Model& model;
  PagedKvCache& cache;
  const std::vector<int64_t> buckets;
  const DecodeStaging staging;
  const PagedDecodeKernel kernel;
  bool graphs = false;
  // Rows padded to a bucket: fixed at construction (a rank whose capture failed goes eager at the
  // same padded size, as the other ranks' collectives expect).
  bool padded = false;
  at::Tensor host, device;
  at::Tensor routed;  // MoE: [rows, num_layers, topk] int32, the last run's routing
  int64_t captures = 0, replays = 0;
};

#if defined(VIME_DECODE_GRAPHS)
DecodeGraphRunner::Impl::Captured DecodeGraphRunner::Impl::capture(int64_t bucket) {
  // As torch.cuda.graph: the work so far finishes, one eager run on a side stream warms up what
  // allocates on first use (cuBLAS workspaces), then the capture on that stream. The eager run
  // writes the same K/V the replay writes again.
  const auto in = inputs(bucket);
  c10::cuda::device_synchronize();
  auto stream = c10::cuda::getStreamFromPool(false, model.device().index());
  Captured c;
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    (void)forward(in, bucket);
    stream.synchronize();
    if (pool.first == 0 && pool.second == 0) pool = at::cuda::graph_pool_handle();
    c.graph = std::make_unique<at::cuda::CUDAGraph>();
    c.graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
    try {
      c.logits = forward(in, bucket);
      c.graph->capture_end();
    } catch (...) {
      // End the stream's capture so that the device stays usable (the caller goes eager).
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(stream.stream(), &status) == cudaSuccess &&
          status != cudaStreamCaptureStatusNone) {
        cudaGraph_t partial = nullptr;
        if (cudaStreamEndCapture(stream.stream(), &partial) == cudaSuccess && partial)
          cudaGraphDestroy(partial);
      }
      (void)cudaGetLastError();
      c.graph.release();  // NOLINT: a half-captured graph is leaked rather than reset
      throw;
    }
  }
  c10::cuda::device_synchronize();
  ++captures;
  return c;
}
#endif

at::Tensor DecodeGraphRunner::Impl::run(std::span<const DecodeRow> rows,
                                        std::optional<bool> capture_now) {
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t bucket = bucket_of(n);
  if (bucket < 0) throw Error("DecodeGraphRunner: more rows than the engine's batch");
  // The staging buffer is free again: the previous step's sampling read its results back.
  staging.fill(rows, bucket, host.data_ptr<int32_t>());
  const int64_t used = staging.used(bucket);
  device.narrow(0, 0, used).copy_(host.narrow(0, 0, used), /*non_blocking=*/true);
#if defined(VIME_DECODE_GRAPHS)
  if (graphs) {
    auto now = addresses();
    if (now != captured_addresses) {
      drop_graphs();  // a weight or the cache moved: capture again
      captured_addresses = std::move(now);
    }
    auto it = captured.find(bucket);
    if (capture_now.value_or(it == captured.end())) {
      if (it != captured.end()) captured.erase(it);
      try {
        it = captured.emplace(bucket, capture(bucket)).first;
      } catch (const std::exception& e) {
        std::cerr << "vime: capturing the decode CUDA graph for " << bucket
                  << " rows failed; decode steps run eagerly from now on: " << e.what()
                  << std::endl;
        graphs = false;
        drop_graphs();
        it = captured.end();
      }
    }
    if (it != captured.end()) {
      it->second.graph->replay();
      ++replays;
      return it->second.logits.narrow(0, 0, n);
    }
  } else if (capture_now.value_or(false)) {
    (void)forward(inputs(bucket), bucket);  // the capture's warm-up run
  }
#else
  (void)capture_now;
#endif
  return forward(inputs(bucket), bucket).narrow(0, 0, n);
}

DecodeGraphRunner::DecodeGraphRunner(Model& model, PagedKvCache& cache, int64_t max_batch,
                                     int64_t max_blocks, bool graphs, PagedDecodeKernel kernel)
    : impl_(std::make_unique<Impl>(model, cache, max_batch, max_blocks, graphs, kernel)) {}

DecodeGraphRunner::~DecodeGraphRunner() = default;

bool DecodeGraphRunner::accepts(std::span<const DecodeRow> rows) const {
  if (rows.empty() || static_cast<int64_t>(rows.size()) > impl_->staging.capacity()) return false;
  for (const auto& row : rows)
    if (!impl_->staging.fits(row)) return false;
  return true;
}

bool DecodeGraphRunner::will_capture(int64_t rows) const { return impl_->will_capture(rows); }

at::Tensor DecodeGraphRunner::run(std::span<const DecodeRow> rows, std::optional<bool> capture) {
  return impl_->run(rows, capture);
}

void DecodeGraphRunner::reset() {
#if defined(VIME_DECODE_GRAPHS)
  impl_->drop_graphs();
  impl_->captured_addresses.clear();
#endif
}

at::Tensor DecodeGraphRunner::routed_experts(int64_t rows) const {
  return impl_->routed.defined() ? impl_->routed.narrow(0, 0, rows) : at::Tensor();
}

int64_t DecodeGraphRunner::graphs_captured() const { return impl_->captures; }
int64_t DecodeGraphRunner::graph_replays() const { return impl_->replays; }

}  // namespace vime::engine
