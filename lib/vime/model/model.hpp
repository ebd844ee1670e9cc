// vime's decoder-only transformer (Megatron's role in slime): Llama-3, Qwen2/2.5 (qkv bias) and
// Qwen3 (q/k RMSNorm) in one class, configured by ModelConfig. Parameters are plain tensors named
// as in HF checkpoints ("model.layers.0.self_attn.q_proj.weight"); the embedding and output rows
// are padded to config.padded_vocab_size for fast GEMMs. Input is a packed batch of variable-length
// sequences; activation recompute wraps whole layers in a custom autograd function. With tensor
// parallelism (model/tensor_parallel.hpp) each rank holds its shards under the same HF names;
// checkpoints and HF tensors stay whole (load_tensors slices, hf_tensors gathers).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vime/model/attention.hpp"
#include "vime/model/context_parallel.hpp"
#include "vime/model/expert_parallel.hpp"
#include "vime/model/lora.hpp"
#include "vime/model/model_config.hpp"
#include "vime/model/tensor_parallel.hpp"

namespace vime {

using NamedTensorList = std::vector<std::pair<std::string, at::Tensor>>;

// Sequences packed end to end (no padding).
struct PackedBatch {
  at::Tensor tokens;     // [total_tokens] int64
  at::Tensor positions;  // [total_tokens] int64, restarting at 0 in each sequence
  VarlenInfo varlen;
  // Set on a context-parallel rank's shard (model/context_parallel.hpp): its rows are chunks of
  // the whole batch's sequences, and attention reaches the other ranks' rows.
  std::shared_ptr<const CpLayout> context_parallel;

  static PackedBatch pack(const std::vector<std::vector<int64_t>>& sequences,
                          const at::Device& device);
  int64_t num_tokens() const { return varlen.cu_seqlens.back(); }
};

// Megatron's --recompute-granularity full --recompute-method uniform|block --recompute-num-layers.
struct RecomputeOptions {
  bool enabled = false;
  int64_t num_layers = 0;  // the first num_layers layers recompute; <= 0 means all

  // --recompute-granularity full [--recompute-method block --recompute-num-layers N]; uniform
  // recomputes every layer (vime recomputes whole layers, so any chunk size covers all of them).
  // selective is refused: vime has no per-submodule recompute.
  static RecomputeOptions from(const Args& args);
};

struct LayerWeights;
struct LayerParallel;

class Model {
 public:
  // Random init (normal(0, 0.02) matrices, unit norms), reproducible from `seed` on the CPU (on
  // CUDA drawn by the device's default generator). With `tp` (a tensor-parallel group), this
  // rank's shards of the same random model; the padded vocabulary rounds up to a multiple of
  // tp.size. Throws UsageError when the shape does not split over tp.size ranks.
  Model(ModelConfig config, at::ScalarType dtype, const at::Device& device, uint64_t seed = 1234,
        TensorParallel tp = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  at::ScalarType dtype() const { return dtype_; }
  at::Device device() const { return device_; }

  // [total_tokens, hidden_size], after the final norm.
  at::Tensor forward_hidden(const PackedBatch& batch);
  // [total_tokens, vocab_size] in the parameter dtype; the GEMM runs over the padded vocabulary and
  // the padding columns are dropped. Under tensor parallelism the ranks' columns are gathered.
  at::Tensor logits(const at::Tensor& hidden);
  // This rank's columns of the padded vocabulary, [total_tokens, padded_vocab_size / tp.size]
  // (columns [tp.rank * that, ...)); all of them without tensor parallelism.
  at::Tensor vocab_parallel_logits(const at::Tensor& hidden);
  at::Tensor forward(const PackedBatch& batch) { return logits(forward_hidden(batch)); }
  // The output layer without its padding rows, [vocab_size, hidden] (a view: gradients reach the
  // parameter), for log-probs that never form the logits (train/linear_log_probs). Whole only
  // without tensor parallelism: under TP lm_head_ is this rank's shard of the vocabulary.
  at::Tensor output_weight() const;

  // Every trainable tensor under its HF name (padded vocabulary; no lm_head.weight when tied):
  // this rank's shards under tensor parallelism.
  const NamedTensorList& named_parameters() const { return parameters_; }
  // Which part of the whole tensor each of named_parameters() is (same order).
  const std::vector<TpSlice>& parameter_slices() const { return slices_; }
  const TensorParallel& tensor_parallel() const;
  // named_parameters()[index] whole: gathered over the tensor-parallel group (a collective).
  at::Tensor full_parameter(size_t index) const;
  // Its whole shape (padded vocabulary).
  std::vector<int64_t> full_shape(size_t index) const;
  std::vector<at::Tensor> parameters() const;
  // Copies `tensors` in (HF names; HF-sized or padded vocabulary; lm_head.weight ignored when
  // tied). Whole tensors (a rank takes its slice), or this rank's shards of a model of the same
  // tensor-parallel size. Throws vime::Error naming `where` and the tensor on a missing name or a
  // wrong shape.
  void load_tensors(const NamedTensorList& tensors, const std::string& where);
  // Tensors as an HF checkpoint holds them: vocabulary cut back to `vocab_size` (0: the config's).
  // Under tensor parallelism a collective: every rank of the group calls it and gets them whole.
  // Then the kept multi-token-prediction layers, as loaded.
  NamedTensorList hf_tensors(int64_t vocab_size = 0) const;
  // DeepSeek-V3's multi-token-prediction layers (model.layers.N .. N + num_nextn_predict_layers
  // - 1) as load_tensors found them: on the CPU, never run, written back by hf_tensors.
  const NamedTensorList& kept_tensors() const { return kept_; }

  // For the engine's paged forward (model/paged_forward.cpp), which runs the layers itself.
  const LayerWeights& layer(int64_t index) const;
  // [n] int64 -> [n, hidden]; under tensor parallelism each rank looks up its vocabulary rows and
  // the group sums them (a collective).
  at::Tensor embed_tokens(const at::Tensor& tokens) const { return embed(tokens); }
  // The tensor-parallel group and KV-head slice the layers run with; null without TP.
  const LayerParallel* layer_parallel() const;
  // The KV heads this rank computes (and an engine caches): all of them without TP, else its
  // share, or the one head it replicates when there are fewer KV heads than ranks.
  int64_t local_kv_heads() const;
  const at::Tensor& embedding() const { return embed_; }
  const at::Tensor& final_norm() const { return final_norm_; }
  const at::Tensor& inverse_frequencies() const { return inv_freq_; }

  // The context-parallel group the trainer shards this model's packed batches over
  // (shard_for_context_parallel); the weights are the same on every rank of it.
  void set_context_parallel(ContextParallel cp) { cp_ = cp; }
  const ContextParallel& context_parallel() const { return cp_; }
  // Expert parallelism (model/expert_parallel.hpp): keeps this rank's experts of every stacked
  // expert tensor (their TpSlice names the group holding the rest, so full_parameter, hf_tensors
  // and load_tensors deal in whole tensors). Before the optimizer is made; once; not with tensor
  // parallelism or LoRA. Throws UsageError naming --expert-model-parallel-size when the experts do
  // not split.
  void set_expert_parallel(ExpertParallel ep);
  const ExpertParallel& expert_parallel() const { return ep_; }
  // The ranks whose full_parameter() (hf_tensors(), ...) is one collective: the tensor-parallel
  // group, else the expert-parallel one; null: every tensor is whole here.
  dist::ProcessGroup* gather_group() const;
  // LoRA (model/lora.hpp): adapters on the targeted linears of every layer (A drawn as PEFT does,
  // reproducibly from `seed` on any tensor-parallel size; B zeros), in the model's dtype, the
  // only tensors that then require grad; the base parameters are frozen. Once only.
  void add_lora(const LoraConfig& config, uint64_t seed = 1234);
  bool has_lora() const { return lora_.enabled(); }
  const LoraConfig& lora_config() const { return lora_; }
  // The adapters under HF-style names ("model.layers.0.self_attn.q_proj.lora_A.weight"): this
  // rank's parts under tensor parallelism, and which part each is (same order).
  const NamedTensorList& lora_parameters() const { return lora_parameters_; }
  const std::vector<TpSlice>& lora_slices() const { return lora_slices_; }
  // The adapters whole (a collective under tensor parallelism).
  NamedTensorList lora_tensors() const;
  // Copies adapters in, whole or this rank's parts, under the names of lora_parameters(); every
  // adapter must be there. vime::Error naming `where` and the tensor otherwise.
  void load_lora_tensors(const NamedTensorList& tensors, const std::string& where);
  // Off: forward_hidden() runs the base alone (the reference model of a LoRA run). The engine's
  // paged forward, which reads layer(), keeps the adapters.
  void set_lora_enabled(bool enabled) { lora_enabled_ = enabled; }
  bool lora_enabled() const { return lora_enabled_; }
  // hf_tensors() with each adapted weight merged: W + scale * B @ A (computed in fp32).
  NamedTensorList merged_hf_tensors(int64_t vocab_size = 0) const;
  // A base parameter or an adapter by name: this rank's tensor and its slice.
  std::optional<std::pair<at::Tensor, TpSlice>> find_parameter(const std::string& name) const;

  void set_recompute(RecomputeOptions options) { recompute_ = options; }
  void set_attention_backend(AttentionBackend backend) { attention_backend_ = backend; }
  void set_requires_grad(bool requires_grad);

 private:
  at::Tensor embed(const at::Tensor& tokens) const;

  ModelConfig config_;
  at::ScalarType dtype_;
  at::Device device_;
  NamedTensorList parameters_;
  std::vector<TpSlice> slices_;
  std::unique_ptr<LayerParallel> parallel_;  // the tensor-parallel group and this rank's KV slice
  std::vector<std::unique_ptr<LayerWeights>> layers_;
  at::Tensor embed_;       // [padded_vocab, hidden]
  at::Tensor final_norm_;  // [hidden]
  at::Tensor lm_head_;     // [padded_vocab, hidden]; the same tensor as embed_ when tied
  at::Tensor inv_freq_;    // [head_dim / 2] fp32
  NamedTensorList kept_;   // multi-token-prediction layers (see kept_tensors)
  LoraConfig lora_;
  NamedTensorList lora_parameters_;
  std::vector<TpSlice> lora_slices_;
  bool lora_enabled_ = true;
  RecomputeOptions recompute_;
  AttentionBackend attention_backend_ = AttentionBackend::kAuto;
  ContextParallel cp_;
  ExpertParallel ep_;

  friend struct LayerRecompute;
};

}  // namespace vime
