// AdamW as Megatron runs it for bf16 models: fp32 master weights and fp32 gradient accumulation
// ("main grads") beside bf16 parameters, global grad-norm clipping, no weight decay on biases and
// norms. Optimizer state may be sharded over data-parallel ranks: rank r updates only the
// parameters it owns (the parameter all-gather after the step lives in lib/vime/dist).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vime/args.hpp"

namespace vime {

using NamedTensorList = std::vector<std::pair<std::string, at::Tensor>>;

struct OptimizerConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  double clip_grad = 1.0;                              // <= 0: no clipping
  static OptimizerConfig from_args(const Args& args);  // --adam-beta1/2, --adam-eps, ...
};

struct OptimizerShard {
  int64_t rank = 0;
  int64_t world_size = 1;
};

struct StepResult {
  double grad_norm = 0;     // before clipping
  bool is_updated = false;  // false when the gradient was not finite
};

class Optimizer {
 public:
  Optimizer(const NamedTensorList& parameters, OptimizerConfig config, OptimizerShard shard = {});

  // Adds each parameter's .grad into its fp32 main grad and clears .grad. Call after every
  // micro-batch's backward.
  void accumulate_grads();
  // The fp32 main grads, in parameter order: what data parallelism all-reduces before step().
  std::vector<at::Tensor> main_grads() const;
  void zero_grad();
  // Clip, then one AdamW update at `lr` of the owned parameters; zeroes the main grads.
  StepResult step(double lr);

  // Copies the parameters into the fp32 masters: after weights were loaded into the model behind
  // the optimizer's back (a fresh start from --ref-load / an HF directory).
  void sync_masters_from_params();

  int64_t num_steps() const { return num_steps_; }
  const OptimizerConfig& config() const { return config_; }
  // "exp_avg.<name>", "exp_avg_sq.<name>" and, for low-precision parameters, "master.<name>".
  NamedTensorList state_tensors() const;
  void load_state_tensors(const NamedTensorList& tensors, int64_t num_steps,
                          const std::string& where);
  // --reset-optimizer-states: Adam starts afresh (zero moments, bias correction from step 1); the
  // fp32 masters keep the current weights.
  void reset_states();

 private:
  struct Slot {
    std::string name;
    at::Tensor param;                // the model's tensor (bf16 or fp32)
    at::Tensor master;               // fp32; the param itself when it is fp32
    at::Tensor main_grad;            // fp32
    at::Tensor exp_avg, exp_avg_sq;  // fp32, owned slots only
    bool has_weight_decay = true;
    bool is_owned = true;
  };
  OptimizerConfig config_;
  std::vector<Slot> slots_;
  int64_t num_steps_ = 0;
};

// Megatron's OptimizerParamScheduler for the learning rate: linear warmup from --lr-warmup-init,
// then constant, linear or cosine decay to --min-lr over --lr-decay-iters.
class LrScheduler {
 public:
  struct Config {
    double max_lr = 1e-6;
    double min_lr = 0;
    double warmup_init_lr = 0;
    int64_t warmup_steps = 0;
    int64_t decay_steps = 0;               // 0: no decay
    std::string decay_style = "constant";  // constant | linear | cosine
  };
  explicit LrScheduler(Config config);
  static LrScheduler from_args(const Args& args);

  double lr() const { return lr_at(num_steps_); }
  double lr_at(int64_t step) const;
  void step(int64_t increment = 1) { num_steps_ += increment; }
  // Copies the parameters into the fp32 masters: after weights were loaded into the model behind
  // the optimizer's back (a fresh start from --ref-load / an HF directory).
  void sync_masters_from_params();

  int64_t num_steps() const { return num_steps_; }
  void set_num_steps(int64_t steps) { num_steps_ = steps; }
  const Config& config() const { return config_; }

 private:
  Config config_;
  int64_t num_steps_ = 0;
};

}  // namespace vime
