#include "vime/model/context_parallel.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/model/context_parallel_saved.hpp"
#include "vime/model/model.hpp"

namespace vime {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor int32_on(const std::vector<int64_t>& values, const at::Device& device) {
  std::vector<int32_t> v(values.begin(), values.end());
  return at::tensor(v, at::TensorOptions().dtype(at::kInt)).to(device);
}

// [T, ...] on each rank -> [size x T, ...], rank-major.
at::Tensor gather_local_rows(const at::Tensor& x, dist::ProcessGroup* group) {
  auto local = x.contiguous();
  std::vector<int64_t> shape{group->size()};
  for (auto s : local.sizes()) shape.push_back(s);
  auto all = at::empty(shape, local.options());
  std::vector<at::Tensor> parts;
  for (int r = 0; r < group->size(); ++r) parts.push_back(all.select(0, r));
  group->all_gather(parts, local);
  shape.erase(shape.begin());
  shape[0] *= group->size();
  return all.view(shape);
}

// The inverse of gather_local_rows for gradients: each rank gets the sum over ranks of its rows.
at::Tensor reduce_scatter_rows(const at::Tensor& grad, dist::ProcessGroup* group) {
  auto shape = grad.sizes().vec();
  shape[0] /= group->size();
  auto out = at::empty(shape, grad.options());
  group->reduce_scatter(out, grad.contiguous());
  return out;
}

}  // namespace

void save_cp_layout(AutogradContext* ctx, const CpLayout& l) {
  auto& d = ctx->saved_data;
  d["cp_group"] = reinterpret_cast<int64_t>(l.group);
  d["cp_size"] = static_cast<int64_t>(l.size);
  d["cp_q_cu"] = c10::IValue(l.queries.cu_seqlens);
  d["cp_k_cu"] = c10::IValue(l.keys.cu_seqlens);
  d["cp_q_max"] = l.queries.max_seqlen;
  d["cp_k_max"] = l.keys.max_seqlen;
  d["cp_key_rows"] = l.key_rows;
  if (l.queries.cu_seqlens_device.defined()) {
    d["cp_q_cu_device"] = l.queries.cu_seqlens_device;
    d["cp_k_cu_device"] = l.keys.cu_seqlens_device;
  }
}

CpLayout restore_cp_layout(AutogradContext* ctx) {
  auto& d = ctx->saved_data;
  CpLayout l;
  l.group = reinterpret_cast<dist::ProcessGroup*>(d["cp_group"].toInt());
  l.size = static_cast<int>(d["cp_size"].toInt());
  l.queries.cu_seqlens = d["cp_q_cu"].toIntVector();
  l.keys.cu_seqlens = d["cp_k_cu"].toIntVector();
  l.queries.max_seqlen = d["cp_q_max"].toInt();
  l.keys.max_seqlen = d["cp_k_max"].toInt();
  l.key_rows = d["cp_key_rows"].toTensor();
  if (d.count("cp_q_cu_device") > 0) {
    l.queries.cu_seqlens_device = d["cp_q_cu_device"].toTensor();
    l.keys.cu_seqlens_device = d["cp_k_cu_device"].toTensor();
  }
  return l;
}

namespace {

at::Tensor attend_gathered(const at::Tensor& q, const at::Tensor& k_all, const at::Tensor& v_all,
                           const CpLayout& l, double scale, AttentionBackend backend) {
  return varlen_causal_attention(q, k_all.index_select(0, l.key_rows),
                                 v_all.index_select(0, l.key_rows), l.queries, l.keys, scale,
                                 backend);
}

struct CpAttention : public torch::autograd::Function<CpAttention> {
  static variable_list forward(AutogradContext* ctx, at::Tensor q, at::Tensor k, at::Tensor v,
                               const CpLayout* layout, double scale, int64_t backend) {
    save_cp_layout(ctx, *layout);
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["backend"] = backend;
    ctx->save_for_backward({q, k, v});
    return {attend_gathered(q, gather_local_rows(k, layout->group),
                            gather_local_rows(v, layout->group), *layout, scale,
                            static_cast<AttentionBackend>(backend))};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const CpLayout layout = restore_cp_layout(ctx);
    auto saved = ctx->get_saved_variables();
    const double scale = ctx->saved_data["scale"].toDouble();
    const auto backend = static_cast<AttentionBackend>(ctx->saved_data["backend"].toInt());
    auto q = saved[0].detach().requires_grad_(true);
    auto k_all = gather_local_rows(saved[1].detach(), layout.group).requires_grad_(true);
    auto v_all = gather_local_rows(saved[2].detach(), layout.group).requires_grad_(true);
    at::Tensor out;
    {
      at::AutoGradMode enable_grad(true);
      out = attend_gathered(q, k_all, v_all, layout, scale, backend);
    }
    auto g = torch::autograd::grad({out}, {q, k_all, v_all}, {grads[0]}, /*retain_graph=*/false,
                                   /*create_graph=*/false, /*allow_unused=*/true);
    auto zero_if_unused = [](const at::Tensor& grad, const at::Tensor& like) {
      return grad.defined() ? grad : at::zeros_like(like);
    };
    // Each rank's queries reach every rank's keys: the K/V gradients are summed where the rows
    // live.
    auto dk = reduce_scatter_rows(zero_if_unused(g[1], k_all), layout.group);
    auto dv = reduce_scatter_rows(zero_if_unused(g[2], v_all), layout.group);
    return {zero_if_unused(g[0], q), dk, dv, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct GatherRows : public torch::autograd::Function<GatherRows> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, at::Tensor dest,
                               int64_t num_rows, dist::ProcessGroup* group) {
    ctx->save_for_backward({dest});
    auto shape = x.sizes().vec();
    shape[0] = num_rows;
    auto full = at::zeros(shape, x.options());
    full.index_copy_(0, dest, x.contiguous());
    std::vector<at::Tensor> t{full};
    group->all_reduce(t, dist::ReduceOp::kSum);
    return {full};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto dest = ctx->get_saved_variables()[0];
    return {grads[0].index_select(0, dest), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

ContextParallel ContextParallel::over(dist::ProcessGroup* group) {
  ContextParallel cp;
  if (group == nullptr || group->size() == 1) return cp;
  cp.group = group;
  cp.rank = group->rank();
  cp.size = group->size();
  return cp;
}

PackedBatch shard_for_context_parallel(const PackedBatch& full, const ContextParallel& cp) {
  if (!cp.is_parallel()) return full;
  const int64_t n = cp.size, r = cp.rank;
  const auto& cu = full.varlen.cu_seqlens;
  const auto device = full.tokens.device();
  auto host_tokens = full.tokens.to(at::kCPU, at::kLong).contiguous();
  const int64_t* tok = host_tokens.data_ptr<int64_t>();
  const size_t num_seqs = cu.size() - 1;
  // Every rank holds 2 chunks of c_s tokens of sample s; the local offset of a sample is the same
  // on every rank.
  std::vector<int64_t> chunk(num_seqs), offset(num_seqs);
  int64_t local_tokens = 0;
  for (size_t s = 0; s < num_seqs; ++s) {
    const int64_t length = cu[s + 1] - cu[s];
    chunk[s] = (length + 2 * n - 1) / (2 * n);
    offset[s] = local_tokens;
    local_tokens += 2 * chunk[s];
  }
  auto layout = std::make_shared<CpLayout>();
  layout->group = cp.group;
  layout->size = cp.size;
  layout->num_global_rows = full.num_tokens();
  layout->global_rows.reserve(local_tokens);
  std::vector<int64_t> tokens, positions, key_rows;
  tokens.reserve(local_tokens);
  positions.reserve(local_tokens);
  layout->queries.cu_seqlens = {0};
  layout->keys.cu_seqlens = {0};
  for (size_t s = 0; s < num_seqs; ++s) {
    const int64_t c = chunk[s], length = cu[s + 1] - cu[s];
    if (c == 0) continue;
    for (int64_t j : {r, 2 * n - 1 - r}) {
      for (int64_t p = j * c; p < (j + 1) * c; ++p) {
        const bool is_real = p < length;
        tokens.push_back(is_real ? tok[cu[s] + p] : 0);
        positions.push_back(p);
        layout->global_rows.push_back(is_real ? cu[s] + p : -1);
      }
      // The keys of chunk j: positions [0, (j + 1) c), each from the rank holding it.
      for (int64_t p = 0; p < (j + 1) * c; ++p) {
        const int64_t jj = p / c;
        const int64_t owner = jj < n ? jj : 2 * n - 1 - jj;
        key_rows.push_back(owner * local_tokens + offset[s] + (jj < n ? 0 : c) + p % c);
      }
      layout->queries.cu_seqlens.push_back(layout->queries.cu_seqlens.back() + c);
      layout->keys.cu_seqlens.push_back(layout->keys.cu_seqlens.back() + (j + 1) * c);
      layout->queries.max_seqlen = std::max(layout->queries.max_seqlen, c);
      layout->keys.max_seqlen = std::max(layout->keys.max_seqlen, (j + 1) * c);
    }
  }
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  layout->key_rows = at::tensor(key_rows, long_options).to(device);
  if (device.is_cuda()) {
    layout->queries.cu_seqlens_device = int32_on(layout->queries.cu_seqlens, device);
    layout->keys.cu_seqlens_device = int32_on(layout->keys.cu_seqlens, device);
  }
  PackedBatch b;
  b.tokens = at::tensor(tokens, long_options).to(device);
  b.positions = at::tensor(positions, long_options).to(device);
  b.varlen = layout->queries;  // each local chunk is a sequence of its own
  b.context_parallel = std::move(layout);
  return b;
}

at::Tensor context_parallel_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const CpLayout& layout, double scale,
                                      AttentionBackend backend) {
  return CpAttention::apply(q, k, v, &layout, scale, static_cast<int64_t>(backend))[0];
}

at::Tensor gather_rows(const at::Tensor& x, const at::Tensor& dest, int64_t num_rows,
                       dist::ProcessGroup* group) {
  if (group == nullptr || group->size() == 1) {
    if (x.size(0) != num_rows) throw Error("gather_rows: a rank alone must hold every row");
    auto shape = x.sizes().vec();
    return at::zeros(shape, x.options()).index_copy(0, dest, x);
  }
  return GatherRows::apply(x, dest, num_rows, group)[0];
}

}  // namespace vime
