#include "vime/model/model.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <array>
#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "vime/error.hpp"
#include "vime/model/context_parallel.hpp"
#include "vime/model/context_parallel_saved.hpp"
#include "vime/model/hf_layout.hpp"
#include "vime/model/layer_weights.hpp"
#include "vime/model/layers.hpp"
#include "vime/model/moe.hpp"
#include "vime/model/recompute_counter.hpp"

namespace vime {

namespace {

std::atomic<int64_t> recomputed_layer_count{0};

const char* const kSlotNames[] = {"input_layernorm.weight",
                                  "self_attn.q_proj.weight",
                                  "self_attn.q_proj.bias",
                                  "self_attn.k_proj.weight",
                                  "self_attn.k_proj.bias",
                                  "self_attn.v_proj.weight",
                                  "self_attn.v_proj.bias",
                                  "self_attn.o_proj.weight",
                                  "self_attn.q_norm.weight",
                                  "self_attn.k_norm.weight",
                                  "post_attention_layernorm.weight",
                                  "mlp.gate_proj.weight",
                                  "mlp.up_proj.weight",
                                  "mlp.down_proj.weight",
                                  "mlp.gate.weight",
                                  "mlp.experts.gate_proj",
                                  "mlp.experts.up_proj",
                                  "mlp.experts.down_proj",
                                  "mlp.shared_expert.gate_proj.weight",
                                  "mlp.shared_expert.up_proj.weight",
                                  "mlp.shared_expert.down_proj.weight",
                                  "mlp.shared_expert_gate.weight",
                                  "mlp.gate.e_score_correction_bias",
                                  "post_self_attn_layernorm.weight",
                                  "post_mlp_layernorm.weight",
                                  "self_attn.q_a_proj.weight",
                                  "self_attn.q_a_layernorm.weight",
                                  "self_attn.q_b_proj.weight",
                                  "self_attn.kv_a_proj_with_mqa.weight",
                                  "self_attn.kv_a_layernorm.weight",
                                  "self_attn.kv_b_proj.weight"};
static_assert(std::size(kSlotNames) == LayerWeights::kNumSlots);

// A slot's HF name in `config`'s layers: DeepSeek-V3's and GLM-4.5's ungated shared experts are
// mlp.shared_experts.* (plural), Qwen2-MoE's gated one mlp.shared_expert.*.
std::string slot_name(size_t slot, const ModelConfig& config) {
  std::string name = kSlotNames[slot];
  static const std::string kShared = "mlp.shared_expert.";
  if (!config.moe.shared_expert_gated && name.starts_with(kShared)) {
    name = "mlp.shared_experts." + name.substr(kShared.size());
  }
  return name;
}

struct LayerContext {
  const ModelConfig* config;
  const VarlenInfo* varlen;
  RopeTables rope;
  AttentionBackend backend;
  const LayerParallel* parallel;  // null: no tensor parallelism
  const CpLayout* cp = nullptr;   // null: no context parallelism
};

at::Tensor layer_math(const LayerWeights& w, const at::Tensor& x, const LayerContext& c) {
  const double scale = c.config->attention_scale();
  return decoder_layer(
      w, x, *c.config, c.rope,
      [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
        if (c.cp != nullptr) return context_parallel_attention(q, k, v, *c.cp, scale, c.backend);
        return varlen_causal_attention(q, k, v, *c.varlen, scale, c.backend);
      },
      c.parallel);
}

bool is_vocab_tensor(const std::string& name) {
  return name == "model.embed_tokens.weight" || name == "lm_head.weight";
}

// N of "model.layers.N.…", else -1.
int64_t layer_index(const std::string& name) {
  static const std::string kPrefix = "model.layers.";
  if (!name.starts_with(kPrefix)) return -1;
  const size_t dot = name.find('.', kPrefix.size());
  if (dot == std::string::npos || dot == kPrefix.size()) return -1;
  int64_t index = 0;
  for (size_t i = kPrefix.size(); i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    index = index * 10 + (name[i] - '0');
  }
  return index;
}

bool is_stacked_expert(const std::string& name) { return !per_expert_name(name, 0).empty(); }

// A stacked expert parameter ([experts, ...]) from a checkpoint that holds it under its own name
// (vime's checkpoints; transformers 5's mlp.experts.down_proj), as transformers 5's fused
// mlp.experts.gate_up_proj (gate rows first), or as the Hub's one tensor per expert. Throws naming
// `where` and the first missing per-expert tensor.
at::Tensor stacked_expert_tensor(const std::map<std::string, const at::Tensor*>& by_name,
                                 const std::string& name, const ModelConfig& config,
                                 const std::string& where) {
  if (auto it = by_name.find(name); it != by_name.end()) return *it->second;
  const bool is_gate = name.ends_with(".gate_proj"), is_up = name.ends_with(".up_proj");
  if (is_gate || is_up) {
    const std::string fused = name.substr(0, name.rfind('.') + 1) + "gate_up_proj";
    if (auto it = by_name.find(fused); it != by_name.end()) {
      const at::Tensor& t = *it->second;
      const int64_t half = t.dim() == 3 ? t.size(1) / 2 : 0;
      return t.narrow(1, is_gate ? 0 : half, half);
    }
  }
  std::vector<at::Tensor> experts;
  for (int64_t j = 0; j < config.moe.num_experts; ++j) {
    const std::string expert = per_expert_name(name, j);
    auto it = by_name.find(expert);
    if (it == by_name.end()) {
      throw Error(where + ": tensor \"" + expert + "\" is missing (a " + config.model_type +
                  " checkpoint holds each of its " + std::to_string(config.moe.num_experts) +
                  " experts' gate_proj, up_proj and down_proj, or transformers 5's fused "
                  "mlp.experts.gate_up_proj and mlp.experts.down_proj)");
    }
    experts.push_back(*it->second);
  }
  return at::stack(experts, 0);
}

at::Tensor mla_layer_attention(const LayerWeights& w, const at::Tensor& h, const ModelConfig& cfg,
                               const RopeTables& rope, const AttentionFn& attend,
                               const LayerParallel& p, const MlaAttentionFn* mla_attend) {
  auto in = mla_project(w.mla, w.q_weight, h, cfg, rope, p.tp);
  if (mla_attend != nullptr) return (*mla_attend)(in, w.mla.kv_b);
  return mla_expanded_attention(in, w.mla.kv_b, cfg, attend);
}

at::Tensor gqa_layer_attention(const LayerWeights& w, const at::Tensor& h, const ModelConfig& cfg,
                               const RopeTables& rope, const AttentionFn& attend,
                               const LayerParallel& p) {
  const int64_t tokens = h.size(0);
  auto q = linear_with_adapter(h, w.q_weight, w.q_bias, &w.lora.q, p.tp)
               .view({tokens, -1, cfg.head_dim});
  auto k = linear_with_adapter(h, sum_over_replicas(w.k_weight, p.kv, p.tp),
                               sum_over_replicas(w.k_bias, p.kv, p.tp), &w.lora.k, p.tp)
               .view({tokens, -1, cfg.head_dim});
  auto v = linear_with_adapter(h, sum_over_replicas(w.v_weight, p.kv, p.tp),
                               sum_over_replicas(w.v_bias, p.kv, p.tp), &w.lora.v, p.tp)
               .view({tokens, -1, cfg.head_dim});
  if (cfg.qk_norm) {  // replicated weights over sharded heads: their gradients sum over ranks
    q = rms_norm(q, copy_to_tp(w.q_norm, p.tp), cfg.rms_norm_eps);
    k = rms_norm(k, copy_to_tp(w.k_norm, p.tp), cfg.rms_norm_eps);
  }
  q = apply_rope(q, rope);
  k = apply_rope(k, rope);
  return attend(q, k, v);
}

}  // namespace

at::Tensor decoder_layer(const LayerWeights& w, const at::Tensor& x, const ModelConfig& cfg,
                         const RopeTables& rope, const AttentionFn& attend,
                         const LayerParallel* parallel, const MlaAttentionFn* mla_attend) {
  static const LayerParallel kAlone;
  const LayerParallel& p = parallel != nullptr ? *parallel : kAlone;
  const int64_t tokens = x.size(0);
  // Heads from the weights' shapes: a tensor-parallel rank holds some of them.
  auto h = copy_to_tp(rms_norm(x, w.input_norm, cfg.rms_norm_eps), p.tp);
  at::Tensor attn = cfg.is_mla() ? mla_layer_attention(w, h, cfg, rope, attend, p, mla_attend)
                                 : gqa_layer_attention(w, h, cfg, rope, attend, p);
  auto attn_out = reduce_from_tp(
      linear_with_adapter(attn.reshape({tokens, -1}), w.o_weight, {}, &w.lora.o, p.tp), p.tp);
  // GLM-4's extra norms act on replicated activations: their weights' gradients are whole.
  if (w.post_attn_out_norm.defined()) {
    attn_out = rms_norm(attn_out, w.post_attn_out_norm, cfg.rms_norm_eps);
  }
  auto x1 = x + attn_out;
  auto h2 = copy_to_tp(rms_norm(x1, w.post_norm, cfg.rms_norm_eps), p.tp);
  auto mlp = w.moe.defined() ? moe_mlp(w.moe, h2, cfg.moe, p.tp)
                             : swiglu_mlp(h2, w.gate_weight, w.up_weight, w.down_weight,
                                          &w.lora.gate, &w.lora.up, &w.lora.down, p.tp);
  auto mlp_out = reduce_from_tp(mlp, p.tp);
  if (w.post_mlp_out_norm.defined()) {
    mlp_out = rms_norm(mlp_out, w.post_mlp_out_norm, cfg.rms_norm_eps);
  }
  return x1 + mlp_out;
}

// A layer whose activations are not kept: forward runs without a graph, backward runs the layer
// again with one and differentiates it (Megatron's --recompute-granularity full).
struct LayerRecompute : public torch::autograd::Function<LayerRecompute> {
  // `tensors`: the layer input, every slot of LayerWeights, then each adapter's A and B (an empty
  // tensor where absent: 1.13 accepts no undefined inputs). They are separate arguments because
  // LibTorch 1.13 does not look for variables inside a std::vector. `layer`: the model's layer
  // (the adapters' settings).
  template <class... Tensors>
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const LayerContext* context,
                                                const LayerWeights* layer, Tensors... tensors) {
    std::vector<at::Tensor> inputs{tensors...};
    ctx->save_for_backward(inputs);
    ctx->saved_data["config"] = reinterpret_cast<int64_t>(context->config);
    ctx->saved_data["layer"] = reinterpret_cast<int64_t>(layer);
    ctx->saved_data["cu_seqlens"] = c10::IValue(context->varlen->cu_seqlens);
    ctx->saved_data["max_seqlen"] = context->varlen->max_seqlen;
    if (context->varlen->cu_seqlens_device.defined()) {
      ctx->saved_data["cu_seqlens_device"] = context->varlen->cu_seqlens_device;
    }
    ctx->saved_data["cos"] = context->rope.cos;
    ctx->saved_data["sin"] = context->rope.sin;
    ctx->saved_data["rope_interleaved"] = context->rope.interleaved;
    ctx->saved_data["backend"] = static_cast<int64_t>(context->backend);
    ctx->saved_data["parallel"] = reinterpret_cast<int64_t>(context->parallel);
    ctx->saved_data["has_cp"] = context->cp != nullptr;
    if (context->cp != nullptr) save_cp_layout(ctx, *context->cp);
    auto weights = weights_from(inputs, *layer);
    if (!weights.moe.defined()) return {layer_math(weights, inputs[0], *context)};
    // An MoE layer keeps its experts' choice, so that backward's recompute replays it (the
    // forward may itself replay the rollout's routing).
    MoeRouting* outer = current_moe_routing();
    MoeRouting own;
    std::optional<MoeRoutingScope> scope;
    if (outer == nullptr) scope.emplace(&own);
    auto out = layer_math(weights, inputs[0], *context);
    MoeRouting* used = outer != nullptr ? outer : &own;
    if (!used->chosen.empty()) ctx->saved_data["moe_indices"] = used->chosen.back();
    return {out};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    std::vector<at::Tensor> leaves, defined_leaves;
    for (const auto& s : saved) {
      // Frozen weights (LoRA's base) get no gradient and are not differentiated.
      const bool is_present = s.numel() > 0 && s.requires_grad();
      leaves.push_back(is_present ? s.detach().requires_grad_(true) : s.detach());
      if (is_present) defined_leaves.push_back(leaves.back());
    }
    VarlenInfo varlen;
    varlen.cu_seqlens = ctx->saved_data["cu_seqlens"].toIntVector();
    varlen.max_seqlen = ctx->saved_data["max_seqlen"].toInt();
    if (ctx->saved_data.count("cu_seqlens_device") > 0) {
      varlen.cu_seqlens_device = ctx->saved_data["cu_seqlens_device"].toTensor();
    }
    LayerContext context{
        reinterpret_cast<const ModelConfig*>(ctx->saved_data["config"].toInt()), &varlen,
        RopeTables{ctx->saved_data["cos"].toTensor(), ctx->saved_data["sin"].toTensor(),
                   ctx->saved_data["rope_interleaved"].toBool()},
        static_cast<AttentionBackend>(ctx->saved_data["backend"].toInt()),
        reinterpret_cast<const LayerParallel*>(ctx->saved_data["parallel"].toInt())};
    std::optional<CpLayout> cp;
    if (ctx->saved_data["has_cp"].toBool()) {
      cp = restore_cp_layout(ctx);
      context.cp = &*cp;
    }
    const auto* layer = reinterpret_cast<const LayerWeights*>(ctx->saved_data["layer"].toInt());
    at::Tensor out;
    {
      at::AutoGradMode enable_grad(true);
      MoeRouting replay;
      if (ctx->saved_data.count("moe_indices") > 0)
        replay.replay = {ctx->saved_data["moe_indices"].toTensor()};
      MoeRoutingScope scope(&replay);
      out = layer_math(weights_from(leaves, *layer), leaves[0], context);
    }
    ++recomputed_layer_count;
    auto defined_grads =
        torch::autograd::grad({out}, defined_leaves, {grads[0]}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    torch::autograd::variable_list result{at::Tensor(), at::Tensor()};  // context, layer
    size_t next = 0;
    for (const auto& leaf : leaves) {
      result.push_back(leaf.requires_grad() ? defined_grads[next++] : at::Tensor());
    }
    return result;
  }

  // The inputs' tensors in `layer`'s places (its adapters' settings kept).
  static LayerWeights weights_from(const std::vector<at::Tensor>& inputs,
                                   const LayerWeights& layer) {
    LayerWeights w;
    w.lora = layer.lora;
    w.moe.ep = layer.moe.ep;
    auto slots = w.slots();
    size_t next = 1;
    for (auto* slot : slots) {
      const auto& t = inputs[next++];
      if (t.numel() > 0) *slot = t;
    }
    for (auto* m : w.lora.modules()) {
      const auto &a = inputs[next], &b = inputs[next + 1];
      next += 2;
      m->a = a.numel() > 0 ? a : at::Tensor();
      m->b = b.numel() > 0 ? b : at::Tensor();
    }
    return w;
  }
};

// The layer input, every LayerWeights slot, each adapter's A and B.
constexpr size_t kRecomputeInputs =
    1 + LayerWeights::kNumSlots + 2 * std::tuple_size_v<decltype(LayerLora{}.modules())>;

template <size_t... I>
at::Tensor apply_recompute(const LayerContext* context, const LayerWeights* layer,
                           const std::array<at::Tensor, kRecomputeInputs>& inputs,
                           std::index_sequence<I...>) {
  return LayerRecompute::apply(context, layer, inputs[I]...)[0];
}

PackedBatch PackedBatch::pack(const std::vector<std::vector<int64_t>>& sequences,
                              const at::Device& device) {
  PackedBatch b;
  std::vector<int64_t> tokens, positions;
  b.varlen.cu_seqlens.push_back(0);
  for (const auto& seq : sequences) {
    for (size_t i = 0; i < seq.size(); ++i) {
      tokens.push_back(seq[i]);
      positions.push_back(static_cast<int64_t>(i));
    }
    b.varlen.cu_seqlens.push_back(static_cast<int64_t>(tokens.size()));
    b.varlen.max_seqlen = std::max<int64_t>(b.varlen.max_seqlen, static_cast<int64_t>(seq.size()));
  }
  auto long_options = at::TensorOptions().dtype(at::kLong);
  b.tokens = at::tensor(tokens, long_options).to(device);
  b.positions = at::tensor(positions, long_options).to(device);
  if (device.is_cuda()) {
    std::vector<int32_t> cu(b.varlen.cu_seqlens.begin(), b.varlen.cu_seqlens.end());
    b.varlen.cu_seqlens_device = at::tensor(cu, at::TensorOptions().dtype(at::kInt)).to(device);
  }
  return b;
}

Model::Model(ModelConfig config, at::ScalarType dtype, const at::Device& device, uint64_t seed,
             TensorParallel tp)
    : config_(std::move(config)), dtype_(dtype), device_(device) {
  const auto& c = config_;
  if (c.padded_vocab_size < c.vocab_size) config_.padded_vocab_size = c.vocab_size;
  if (tp.is_parallel()) {
    check_tensor_parallel_shape(config_, tp.size);
    config_.padded_vocab_size = pad_vocab_size(config_.padded_vocab_size, tp.size);
  }
  parallel_ = std::make_unique<LayerParallel>();
  parallel_->tp = tp;
  parallel_->kv = tp_slice("model.layers.0.self_attn.k_proj.weight", config_, tp);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto cpu_float = at::TensorOptions().dtype(at::kFloat);
  // The whole tensor is drawn (the same values at every tensor-parallel size); a rank keeps its
  // slice.
  auto make = [&](std::vector<int64_t> shape, bool is_norm) {
    if (is_norm) return at::ones(shape, cpu_float).to(device_, dtype_);
    if (device_.is_cuda()) {  // large random models (benchmarks): draw on the GPU, unseeded
      return at::empty(shape, cpu_float.device(device_)).normal_(0.0, 0.02).to(dtype_);
    }
    return at::normal(0.0, 0.02, shape, gen, cpu_float).to(device_, dtype_);
  };
  auto add = [&](const std::string& name, const at::Tensor& full) {
    const TpSlice slice = tp_slice(name, config_, tp);
    at::Tensor local = tp.is_parallel() ? slice.of(full).clone() : full;
    parameters_.emplace_back(name, local);
    slices_.push_back(slice);
    return local;
  };
  auto embed = make({config_.padded_vocab_size, c.hidden_size}, false);
  if (config_.padded_vocab_size > c.vocab_size) {
    embed.narrow(0, c.vocab_size, config_.padded_vocab_size - c.vocab_size).zero_();
  }
  embed_ = add("model.embed_tokens.weight", embed);
  const int64_t q_dim = c.num_attention_heads * c.head_dim,
                kv_dim = c.num_key_value_heads * c.head_dim;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    LayerWeights full;
    full.input_norm = make({c.hidden_size}, true);
    if (c.is_mla()) {
      const auto& m = c.mla;
      const int64_t heads = c.num_attention_heads;
      if (m.q_lora_rank > 0) {
        full.mla.q_a = make({m.q_lora_rank, c.hidden_size}, false);
        full.mla.q_a_norm = make({m.q_lora_rank}, true);
        full.mla.q_b = make({heads * m.qk_head_dim(), m.q_lora_rank}, false);
      } else {
        full.q_weight = make({heads * m.qk_head_dim(), c.hidden_size}, false);
      }
      full.mla.kv_a = make({m.kv_lora_rank + m.qk_rope_head_dim, c.hidden_size}, false);
      full.mla.kv_a_norm = make({m.kv_lora_rank}, true);
      full.mla.kv_b = make({heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank}, false);
      full.o_weight = make({c.hidden_size, heads * m.v_head_dim}, false);
    } else {
      full.q_weight = make({q_dim, c.hidden_size}, false);
      full.k_weight = make({kv_dim, c.hidden_size}, false);
      full.v_weight = make({kv_dim, c.hidden_size}, false);
      full.o_weight = make({c.hidden_size, q_dim}, false);
    }
    if (c.qkv_bias) {
      full.q_bias = make({q_dim}, false);
      full.k_bias = make({kv_dim}, false);
      full.v_bias = make({kv_dim}, false);
    }
    if (c.qk_norm) {
      full.q_norm = make({c.head_dim}, true);
      full.k_norm = make({c.head_dim}, true);
    }
    full.post_norm = make({c.hidden_size}, true);
    if (c.post_sublayer_norms) {
      full.post_attn_out_norm = make({c.hidden_size}, true);
      full.post_mlp_out_norm = make({c.hidden_size}, true);
    }
    if (c.is_moe_layer(i)) {
      const auto& m = c.moe;
      const int64_t e = m.num_experts, f = m.moe_intermediate_size;
      full.moe.router = make({e, c.hidden_size}, false);
      full.moe.gate = make({e, f, c.hidden_size}, false);
      full.moe.up = make({e, f, c.hidden_size}, false);
      full.moe.down = make({e, c.hidden_size, f}, false);
      if (const int64_t s = m.shared_expert_intermediate_size; s > 0) {
        full.moe.shared_gate = make({s, c.hidden_size}, false);
        full.moe.shared_up = make({s, c.hidden_size}, false);
        full.moe.shared_down = make({c.hidden_size, s}, false);
        if (m.shared_expert_gated) full.moe.shared_expert_gate = make({1, c.hidden_size}, false);
      }
      if (m.expert_bias) full.moe.expert_bias = at::zeros({e}, cpu_float).to(device_);
    } else {
      full.gate_weight = make({c.intermediate_size, c.hidden_size}, false);
      full.up_weight = make({c.intermediate_size, c.hidden_size}, false);
      full.down_weight = make({c.hidden_size, c.intermediate_size}, false);
    }
    auto w = std::make_unique<LayerWeights>();
    auto full_slots = full.slots();
    auto slots = w->slots();
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    for (size_t s = 0; s < slots.size(); ++s) {
      if (full_slots[s]->defined()) *slots[s] = add(prefix + slot_name(s, c), *full_slots[s]);
    }
    layers_.push_back(std::move(w));
  }
  final_norm_ = add("model.norm.weight", make({c.hidden_size}, true));
  if (c.tie_word_embeddings) {
    lm_head_ = embed_;
  } else {
    lm_head_ = add("lm_head.weight", make({config_.padded_vocab_size, c.hidden_size}, false));
  }
  inv_freq_ = rope_inverse_frequencies(config_, device_);
  set_requires_grad(true);
}

Model::~Model() = default;

const LayerWeights& Model::layer(int64_t index) const { return *layers_.at(index); }

std::vector<at::Tensor> Model::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& [name, t] : parameters_) out.push_back(t);
  return out;
}

void Model::set_requires_grad(bool requires_grad) {
  for (auto& [name, t] : parameters_) t.requires_grad_(requires_grad && !is_expert_bias(name));
}

void Model::load_tensors(const NamedTensorList& given, const std::string& where) {
  const NamedTensorList tensors = split_fused_gate_up(given);
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : tensors) by_name[name] = &t;
  at::NoGradGuard no_grad;
  if (const int64_t mtp = config_.mla.num_nextn_predict_layers; mtp > 0) {
    kept_.clear();
    for (const auto& [name, t] : tensors) {
      const int64_t layer = layer_index(name);
      if (layer >= config_.num_layers && layer < config_.num_layers + mtp) {
        kept_.emplace_back(name, t.to(at::kCPU).clone());
      }
    }
  }
  const auto& tp = parallel_->tp;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    auto& [name, param] = parameters_[i];
    const TpSlice& slice = slices_[i];
    at::Tensor stacked;
    auto it = by_name.find(name);
    if (it == by_name.end() && is_stacked_expert(name)) {
      stacked = stacked_expert_tensor(by_name, name, config_, where);
    } else if (it == by_name.end()) {
      throw Error(where + ": tensor \"" + name + "\" is missing (is this checkpoint for a " +
                  config_.model_type + " model of this size?)");
    }
    const at::Tensor& src = stacked.defined() ? stacked : *it->second;
    const auto full = whole_shape(param, slice, tp.size);
    // The whole vocabulary, padded or not: this rank's rows of it, zero past its end.
    if (is_vocab_tensor(name) && src.dim() == 2 && src.size(1) == param.size(1) &&
        src.size(0) >= config_.vocab_size && src.size(0) <= full[0]) {
      const int64_t begin = slice.dim < 0 ? 0 : slice.start;
      const int64_t rows = param.size(0);
      const int64_t have = std::clamp<int64_t>(src.size(0) - begin, 0, rows);
      param.narrow(0, have, rows - have).zero_();
      if (have > 0) param.narrow(0, 0, have).copy_(src.narrow(0, begin, have));
      continue;
    }
    if (src.sizes() == at::IntArrayRef(full)) {
      param.copy_(slice.of(src));
    } else if (tp.is_parallel() && src.sizes() == param.sizes()) {
      param.copy_(src);  // this rank's shard already (a model of the same tensor-parallel size)
    } else {
      throw Error(where + ": tensor \"" + name + "\" has shape " + c10::str(src.sizes()) +
                  ", the config needs " + c10::str(at::IntArrayRef(full)));
    }
  }
}

at::Tensor Model::full_parameter(size_t index) const {
  const auto& [name, t] = parameters_.at(index);
  return gather_full(t.detach(), slices_[index], parallel_->tp);
}

std::vector<int64_t> Model::full_shape(size_t index) const {
  return whole_shape(parameters_.at(index).second, slices_[index], parallel_->tp.size);
}

NamedTensorList Model::hf_tensors(int64_t vocab_size) const {
  if (vocab_size <= 0) vocab_size = config_.vocab_size;
  NamedTensorList out;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const auto& name = parameters_[i].first;
    auto t = full_parameter(i);
    if (is_stacked_expert(name)) {  // the Hub's layout: one tensor per expert
      for (int64_t j = 0; j < t.size(0); ++j) out.emplace_back(per_expert_name(name, j), t[j]);
      continue;
    }
    out.emplace_back(name, is_vocab_tensor(name) ? t.narrow(0, 0, vocab_size) : t);
  }
  out.insert(out.end(), kept_.begin(), kept_.end());
  return out;
}

const TensorParallel& Model::tensor_parallel() const { return parallel_->tp; }

dist::ProcessGroup* Model::gather_group() const {
  if (parallel_->tp.is_parallel()) return parallel_->tp.group;
  return ep_.is_parallel() ? ep_.group : nullptr;
}

void Model::set_expert_parallel(ExpertParallel ep) {
  if (!ep.is_parallel()) return;
  check_expert_parallel_shape(config_, ep.size);
  if (ep_.is_parallel() || parallel_->tp.is_parallel() || has_lora()) {
    throw Error(
        "expert parallelism: set once, on a model without tensor parallelism or LoRA adapters");
  }
  const int64_t per_rank = config_.moe.num_experts / ep.size;
  at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> local;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    auto& [name, param] = parameters_[i];
    if (!is_stacked_expert(name)) continue;
    auto mine = param.detach().narrow(0, ep.rank * per_rank, per_rank).clone();
    mine.set_requires_grad(param.requires_grad());
    TpSlice& slice = slices_[i];
    slice.dim = 0;
    slice.start = ep.rank * per_rank;
    slice.length = per_rank;
    slice.group = ep.group;
    slice.parts = ep.size;
    param = mine;
    local[name] = mine;
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    auto& moe = layers_[i]->moe;
    if (!moe.defined()) continue;
    const std::string prefix = "model.layers." + std::to_string(i) + ".mlp.experts.";
    moe.gate = local.at(prefix + "gate_proj");
    moe.up = local.at(prefix + "up_proj");
    moe.down = local.at(prefix + "down_proj");
    moe.ep = ep;
  }
  ep_ = ep;
}

const LayerParallel* Model::layer_parallel() const {
  return parallel_->tp.is_parallel() ? parallel_.get() : nullptr;
}

int64_t Model::local_kv_heads() const {
  if (config_.is_mla()) return 1;  // the latent and the RoPE key, shared by every head
  if (!parallel_->tp.is_parallel()) return config_.num_key_value_heads;
  return parallel_->kv.length / config_.head_dim;
}

at::Tensor Model::embed(const at::Tensor& tokens) const {
  const auto& tp = parallel_->tp;
  if (!tp.is_parallel()) return at::embedding(embed_, tokens);
  // Vocab-parallel: each rank looks up the tokens in its rows, zeros for the rest, summed.
  const int64_t rows = embed_.size(0);
  auto local = tokens - rows * tp.rank;
  auto outside = (local < 0).logical_or(local >= rows);
  auto found =
      at::embedding(embed_, local.masked_fill(outside, 0)).masked_fill(outside.unsqueeze(-1), 0.0);
  return reduce_from_tp(found, tp);
}

int64_t recomputed_layers() { return recomputed_layer_count.load(); }

at::Tensor Model::forward_hidden(const PackedBatch& batch) {
  auto x = embed(batch.tokens);  // [T, hidden]
  LayerContext context{&config_,
                       &batch.varlen,
                       rope_tables(inv_freq_, batch.positions, dtype_, config_.rope_interleaved,
                                   config_.rope_attention_factor()),
                       attention_backend_,
                       parallel_->tp.is_parallel() ? parallel_.get() : nullptr,
                       batch.context_parallel.get()};
  const int64_t num_recompute = !recompute_.enabled ? 0
                                : recompute_.num_layers <= 0
                                    ? config_.num_layers
                                    : std::min(recompute_.num_layers, config_.num_layers);
  const bool without_adapters = has_lora() && !lora_enabled_;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const LayerWeights& w = *layers_[i];
    LayerWeights base;
    if (without_adapters) {
      base = w;
      base.lora = {};
    }
    const LayerWeights& l = without_adapters ? base : w;
    if (i < num_recompute && at::GradMode::is_enabled()) {
      LayerWeights s = l;
      auto empty = at::empty({0}, x.options().requires_grad(false));
      std::array<at::Tensor, kRecomputeInputs> inputs;
      size_t next = 0;
      inputs[next++] = x;
      for (auto* slot : s.slots()) inputs[next++] = slot->defined() ? *slot : empty;
      for (auto* m : s.lora.modules()) {
        inputs[next++] = m->active() ? m->a : empty;
        inputs[next++] = m->active() ? m->b : empty;
      }
      x = apply_recompute(&context, &w, inputs, std::make_index_sequence<kRecomputeInputs>());
    } else {
      x = layer_math(l, x, context);
    }
  }
  return rms_norm(x, final_norm_, config_.rms_norm_eps);
}

at::Tensor Model::output_weight() const { return lm_head_.narrow(0, 0, config_.vocab_size); }

at::Tensor Model::vocab_parallel_logits(const at::Tensor& hidden) {
  return at::linear(copy_to_tp(hidden, parallel_->tp), lm_head_);
}

at::Tensor Model::logits(const at::Tensor& hidden) {
  return gather_from_tp(vocab_parallel_logits(hidden), parallel_->tp)
      .narrow(-1, 0, config_.vocab_size);
}

}  // namespace vime
