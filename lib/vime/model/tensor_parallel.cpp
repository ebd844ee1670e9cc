#include "vime/model/tensor_parallel.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/model/model_config.hpp"

namespace vime {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void all_reduce_sum(at::Tensor& t, dist::ProcessGroup* group) {
  std::vector<at::Tensor> v{t};
  group->all_reduce(v, dist::ReduceOp::kSum);
}

// Whether autograd records an op on x: when not (the engine's forwards, evaluation), the f/g
// operators skip their autograd nodes, and g reduces x in place instead of a copy.
bool records_grad(const at::Tensor& x) { return at::GradMode::is_enabled() && x.requires_grad(); }

// [..., width] on every rank -> [..., size x width], the ranks' parts side by side (rank order).
at::Tensor gather_last_dim(const at::Tensor& x, dist::ProcessGroup* group) {
  auto local = x.contiguous();
  std::vector<int64_t> shape{group->size()};
  for (auto s : local.sizes()) shape.push_back(s);
  auto all = at::empty(shape, local.options());  // [size, ..., width]
  std::vector<at::Tensor> parts;
  for (int r = 0; r < group->size(); ++r) parts.push_back(all.select(0, r));
  group->all_gather(parts, local);
  std::vector<int64_t> order;
  for (int64_t d = 1; d < local.dim(); ++d) order.push_back(d);
  order.push_back(0);
  order.push_back(local.dim());
  auto out = local.sizes().vec();
  out.back() *= group->size();
  return all.permute(order).reshape(out);
}

dist::ProcessGroup* group_of(AutogradContext* ctx) {
  return reinterpret_cast<dist::ProcessGroup*>(ctx->saved_data["group"].toInt());
}

struct CopyToTp : public torch::autograd::Function<CopyToTp> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, dist::ProcessGroup* group) {
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    return {x.view_as(x)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto g = grads[0].contiguous().clone();
    all_reduce_sum(g, group_of(ctx));
    return {g, at::Tensor()};
  }
};

struct ReduceFromTp : public torch::autograd::Function<ReduceFromTp> {
  static variable_list forward(AutogradContext*, at::Tensor x, dist::ProcessGroup* group) {
    auto y = x.contiguous().clone();
    all_reduce_sum(y, group);
    return {y};
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0], at::Tensor()};
  }
};

struct GatherFromTp : public torch::autograd::Function<GatherFromTp> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, dist::ProcessGroup* group) {
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    ctx->saved_data["width"] = x.size(-1);
    return {gather_last_dim(x, group)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t width = ctx->saved_data["width"].toInt();
    const int rank = group_of(ctx)->rank();
    return {grads[0].narrow(-1, rank * width, width).contiguous(), at::Tensor()};
  }
};

// Backward: the gradient lands in slot `index` of `slots` zeroed slots, is summed over the group,
// and this rank takes its slot back: the sum over the ranks holding the same slot.
struct SumOverReplicas : public torch::autograd::Function<SumOverReplicas> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, dist::ProcessGroup* group,
                               int64_t index, int64_t slots) {
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    ctx->saved_data["index"] = index;
    ctx->saved_data["slots"] = slots;
    return {x.view_as(x)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t index = ctx->saved_data["index"].toInt();
    const int64_t slots = ctx->saved_data["slots"].toInt();
    auto g = grads[0].contiguous();
    std::vector<int64_t> shape{slots};
    for (auto s : g.sizes()) shape.push_back(s);
    auto all = at::zeros(shape, g.options());
    all.select(0, index).copy_(g);
    all_reduce_sum(all, group_of(ctx));
    return {all.select(0, index).contiguous(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string tp_flag(int tp) { return "--tensor-model-parallel-size " + std::to_string(tp); }

}  // namespace

TensorParallel TensorParallel::over(dist::ProcessGroup* group) {
  TensorParallel tp;
  if (group == nullptr || group->size() == 1) return tp;
  tp.group = group;
  tp.rank = group->rank();
  tp.size = group->size();
  return tp;
}

void check_tensor_parallel_shape(const ModelConfig& c, int tp) {
  if (tp < 1) throw UsageError(tp_flag(tp) + ": must be >= 1");
  if (tp == 1) return;
  if (c.num_attention_heads % tp != 0) {
    throw UsageError(tp_flag(tp) + ": the model's " + std::to_string(c.num_attention_heads) +
                     " attention heads do not split over " + std::to_string(tp) + " ranks");
  }
  const int64_t kv = c.num_key_value_heads;
  if (kv % tp != 0 && tp % kv != 0) {
    throw UsageError(tp_flag(tp) + ": the model's " + std::to_string(kv) +
                     " key/value heads neither split over nor replicate evenly on " +
                     std::to_string(tp) + " ranks");
  }
  if (c.is_moe() && c.moe.moe_intermediate_size % tp != 0) {
    throw UsageError(tp_flag(tp) + ": the experts' FFN size " +
                     std::to_string(c.moe.moe_intermediate_size) + " does not split over " +
                     std::to_string(tp) + " ranks");
  }
  if (c.moe.shared_expert_intermediate_size % tp != 0) {
    throw UsageError(tp_flag(tp) + ": the shared expert's FFN size " +
                     std::to_string(c.moe.shared_expert_intermediate_size) +
                     " does not split over " + std::to_string(tp) + " ranks");
  }
  if (c.intermediate_size % tp != 0) {
    throw UsageError(tp_flag(tp) + ": the FFN size " + std::to_string(c.intermediate_size) +
                     " does not split over " + std::to_string(tp) + " ranks");
  }
}

TpSlice tp_slice(const std::string& name, const ModelConfig& c, const TensorParallel& tp) {
  TpSlice s;
  if (!tp.is_parallel()) return s;
  const int64_t n = tp.size, r = tp.rank;
  auto split = [&](int64_t dim, int64_t total) {
    s.dim = dim;
    s.length = total / n;
    s.start = s.length * r;
  };
  const bool is_weight_or_bias = ends_with(name, ".weight") || ends_with(name, ".bias");
  const int64_t heads = c.num_attention_heads;
  if (name == "model.embed_tokens.weight" || name == "lm_head.weight") {
    split(0, c.padded_vocab_size);
  } else if (c.is_mla() && (ends_with(name, "self_attn.q_proj.weight") ||
                            ends_with(name, "self_attn.q_b_proj.weight"))) {
    split(0, heads * c.mla.qk_head_dim());
  } else if (c.is_mla() && ends_with(name, "self_attn.kv_b_proj.weight")) {
    split(0, heads * (c.mla.qk_nope_head_dim + c.mla.v_head_dim));
  } else if (c.is_mla() && ends_with(name, "self_attn.o_proj.weight")) {
    split(1, heads * c.mla.v_head_dim);
  } else if (ends_with(name, "self_attn.q_proj.weight") ||
             ends_with(name, "self_attn.q_proj.bias")) {
    split(0, c.num_attention_heads * c.head_dim);
  } else if (is_weight_or_bias && (name.find("self_attn.k_proj.") != std::string::npos ||
                                   name.find("self_attn.v_proj.") != std::string::npos)) {
    const int64_t kv = c.num_key_value_heads;
    s.dim = 0;
    if (kv >= n) {
      split(0, kv * c.head_dim);
    } else {  // replicated: ranks [j * n / kv, (j + 1) * n / kv) hold head j
      const int64_t head = r * kv / n;
      s.start = head * c.head_dim;
      s.length = c.head_dim;
      s.replica_index = head;
      s.num_replica_slots = kv;
      s.is_duplicate = r % (n / kv) != 0;
    }
  } else if (ends_with(name, "self_attn.o_proj.weight")) {
    split(1, c.num_attention_heads * c.head_dim);
  } else if (ends_with(name, "mlp.experts.gate_proj") || ends_with(name, "mlp.experts.up_proj")) {
    split(1, c.moe.moe_intermediate_size);  // [experts, ffn, hidden]
  } else if (ends_with(name, "mlp.experts.down_proj")) {
    split(2, c.moe.moe_intermediate_size);  // [experts, hidden, ffn]
  } else if (ends_with(name, "mlp.shared_expert.gate_proj.weight") ||
             ends_with(name, "mlp.shared_expert.up_proj.weight") ||
             ends_with(name, "mlp.shared_experts.gate_proj.weight") ||
             ends_with(name, "mlp.shared_experts.up_proj.weight")) {
    split(0, c.moe.shared_expert_intermediate_size);
  } else if (ends_with(name, "mlp.shared_expert.down_proj.weight") ||
             ends_with(name, "mlp.shared_experts.down_proj.weight")) {
    split(1, c.moe.shared_expert_intermediate_size);
  } else if (ends_with(name, "mlp.gate_proj.weight") || ends_with(name, "mlp.up_proj.weight")) {
    split(0, c.intermediate_size);
  } else if (ends_with(name, "mlp.down_proj.weight")) {
    split(1, c.intermediate_size);
  } else {
    // norms, the router and its correction bias, the shared expert's gate: the same everywhere
    s.is_duplicate = r != 0;
  }
  return s;
}

std::vector<int64_t> whole_shape(const at::Tensor& local, const TpSlice& slice, int tp_size) {
  auto shape = local.sizes().vec();
  if (slice.dim >= 0) {
    shape[slice.dim] = slice.num_replica_slots > 0 ? slice.length * slice.num_replica_slots
                       : slice.parts > 0           ? slice.length * slice.parts
                                                   : slice.length * tp_size;
  }
  return shape;
}

at::Tensor copy_to_tp(const at::Tensor& x, const TensorParallel& tp) {
  if (!tp.is_parallel() || !records_grad(x)) return x;
  return CopyToTp::apply(x, tp.group)[0];
}

at::Tensor reduce_from_tp(const at::Tensor& x, const TensorParallel& tp) {
  if (!tp.is_parallel()) return x;
  // x is the caller's temporary (a row-parallel layer's output): with no gradient to record it is
  // summed in place.
  if (!records_grad(x)) {
    auto y = x.contiguous();
    all_reduce_sum(y, tp.group);
    return y;
  }
  return ReduceFromTp::apply(x, tp.group)[0];
}

at::Tensor gather_from_tp(const at::Tensor& x, const TensorParallel& tp) {
  if (!tp.is_parallel()) return x;
  if (!records_grad(x)) return gather_last_dim(x, tp.group);
  return GatherFromTp::apply(x, tp.group)[0];
}

at::Tensor sum_over_replicas(const at::Tensor& x, const TpSlice& slice, const TensorParallel& tp) {
  if (!tp.is_parallel() || slice.num_replica_slots == 0 || !x.defined() || !records_grad(x))
    return x;
  return SumOverReplicas::apply(x, tp.group, slice.replica_index, slice.num_replica_slots)[0];
}

at::Tensor gather_full(const at::Tensor& local, const TpSlice& slice, const TensorParallel& tp) {
  if (slice.group != nullptr) {  // one expert-parallel rank's experts
    auto mine = local.detach().contiguous();
    std::vector<at::Tensor> parts(slice.parts);
    for (auto& p : parts) p = at::empty_like(mine);
    slice.group->all_gather(parts, mine);
    return at::cat(parts, slice.dim);
  }
  if (!tp.is_parallel() || slice.dim < 0) return local;
  auto mine = local.detach().contiguous();
  std::vector<at::Tensor> parts(tp.size);
  for (auto& p : parts) p = at::empty_like(mine);
  tp.group->all_gather(parts, mine);
  if (slice.num_replica_slots > 0) {  // one copy of each replicated head
    const int64_t per_head = tp.size / slice.num_replica_slots;
    std::vector<at::Tensor> heads;
    for (int64_t r = 0; r < tp.size; r += per_head) heads.push_back(parts[r]);
    return at::cat(heads, slice.dim);
  }
  return at::cat(parts, slice.dim);
}

}  // namespace vime
