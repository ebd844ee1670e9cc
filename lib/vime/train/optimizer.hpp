// AdamW as Megatron runs it for bf16 models: fp32 master weights and fp32 gradient accumulation
// ("main grads") beside bf16 parameters, global grad-norm clipping, no weight decay on biases and
// norms. Data parallel as Megatron's DDP: the main grads are views into a few flat fp32 buckets
// (grad_buckets.hpp), all-reduced as a mean over the ranks in step(); with
// --use-distributed-optimizer (ZeRO-1) the buckets are reduce-scattered instead, each rank keeps
// masters and Adam moments only for its contiguous range of every bucket, updates it, and the
// updated parameters are all-gathered into every rank's model.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vime/args.hpp"

namespace vime::dist {
class ProcessGroup;
}

namespace vime {

class HostOffload;
class Model;

using NamedTensorList = std::vector<std::pair<std::string, at::Tensor>>;

struct OptimizerConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  double clip_grad = 1.0;    // <= 0: no clipping
  bool distributed = false;  // --use-distributed-optimizer: ZeRO-1 over the group's ranks
  // Main-grad bucket size in fp32 elements (40 MiB), as Megatron's DDP buckets its grad buffer.
  int64_t bucket_elements = int64_t{10} << 20;
  static OptimizerConfig from(const Args& args);  // --adam-beta1/2, --adam-eps, ...
};

// Tensor parallelism in the global grad norm (Megatron's model-parallel norm): the squares of each
// rank's shards are summed over `group`, a parameter held by several ranks (norms, replicated KV
// heads) counted once, on its first holder. Default: no tensor parallelism.
struct TensorParallelNorm {
  dist::ProcessGroup* group = nullptr;
  std::set<std::string> duplicates;  // names this rank holds but does not count
  static TensorParallelNorm of(const Model& model);
};

// Expert parallelism (Megatron's expert-data-parallel reduction): the parameters in `names` are
// this rank's experts, held also by the ranks of `data_parallel` (null: by this rank alone) and
// unlike those of the other ranks of `expert_parallel`. Their main grads are summed over
// `data_parallel` and divided by the whole data-parallel size, as the dense ones (each expert
// rank's gradient already sums the tokens every rank of its expert-parallel group sent it); the
// distributed optimizer shards them over `data_parallel`; the grad norm counts each expert once.
struct ExpertGrads {
  dist::ProcessGroup* data_parallel = nullptr;
  dist::ProcessGroup* expert_parallel = nullptr;  // null: no expert parallelism
  std::set<std::string> names;
  static ExpertGrads of(const Model& model);
};

struct StepResult {
  double grad_norm = 0;     // before clipping
  bool is_updated = false;  // false when the gradient was not finite
};

// The part of one parameter's optimizer state that this rank holds: elements [offset, offset +
// numel) of the flattened parameter (the whole parameter unless sharded).
struct StateSegment {
  std::string name;            // the parameter's
  std::vector<int64_t> shape;  // the whole parameter's
  int64_t offset = 0;
  int64_t numel = 0;
  // "exp_avg", "exp_avg_sq" and, for low-precision parameters, "master": 1-D, [numel], fp32.
  NamedTensorList values;
};

// Reads elements [offset, offset + numel) of the flattened full state `key` ("exp_avg.<name>",
// "exp_avg_sq.<name>", "master.<name>") of a parameter of `shape`; throws vime::Error naming the
// source when it is missing or has another shape.
using StateReader = std::function<at::Tensor(const std::string& key, at::IntArrayRef shape,
                                             int64_t offset, int64_t numel)>;

class Optimizer {
 public:
  // `parameters`: the trainable tensors (contiguous, one device). `group`: the data-parallel
  // ranks; null or a group of one trains alone (no collective at all). `tp`: the
  // tensor-parallel group the parameters are shards of (for the grad norm only: each rank
  // updates its own shards). `experts`: the expert-parallel parameters and their groups.
  Optimizer(const NamedTensorList& parameters, OptimizerConfig config,
            dist::ProcessGroup* group = nullptr, TensorParallelNorm tp = {},
            ExpertGrads experts = {});
  ~Optimizer();

  // Adds each parameter's .grad into its fp32 main grad and clears .grad. Call after every
  // micro-batch's backward.
  void accumulate_grads();
  // The fp32 main grads, in parameter order (views into the buckets; before step() each rank's
  // own sum).
  std::vector<at::Tensor> main_grads() const;
  void zero_grad();
  // Averages the main grads over the ranks (all-reduce, or reduce-scatter when sharded), clips
  // by the global grad norm, one AdamW update at `lr` (of this rank's part, then all-gathered
  // into the parameters when sharded); zeroes the main grads. Every rank of the group must call
  // it; all of them skip a non-finite gradient together.
  StepResult step(double lr);

  // Copies the parameters into the fp32 masters: after weights were loaded into the model behind
  // the optimizer's back (a fresh start from --ref-load / an HF directory).
  void sync_masters_from_params();

  // --offload-train: moves the main grads, masters and Adam moments to (pinned) host memory and
  // frees their device memory while the rollout runs; reload() brings them back before training.
  // Views stay valid. On the CPU the same code path runs (host to host).
  void offload();
  void reload();
  bool is_offloaded() const;

  int64_t num_steps() const { return num_steps_; }
  const OptimizerConfig& config() const { return config_; }
  // ZeRO-1 over more than one rank: each rank holds part of the state.
  bool is_sharded() const { return sharded_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // The whole state, unsharded only: "exp_avg.<name>", "exp_avg_sq.<name>" and, for
  // low-precision parameters, "master.<name>".
  NamedTensorList state_tensors() const;
  void load_state_tensors(const NamedTensorList& tensors, int64_t num_steps,
                          const std::string& where);
  // state_tensors() of a sharded optimizer too: every rank's shards all-gathered over the group
  // (a collective; unsharded: state_tensors()).
  NamedTensorList gathered_state_tensors() const;
  // This rank's part of the state, in parameter order (sharded or not).
  std::vector<StateSegment> state_segments() const;
  // Fills this rank's part from `read` (a checkpoint of any data-parallel size).
  void load_state(const StateReader& read, int64_t num_steps);
  // --reset-optimizer-states: Adam starts afresh (zero moments, bias correction from step 1); the
  // fp32 masters keep the current weights.
  void reset_states();

 private:
  struct Slot {
    std::string name;
    at::Tensor param;      // the model's tensor (bf16 or fp32)
    at::Tensor main_grad;  // fp32, a view into its bucket
    size_t bucket = 0;
    int64_t bucket_offset = 0;  // where the parameter starts in its bucket
    bool has_weight_decay = true;
    bool is_tp_duplicate = false;  // left out of the grad norm (another rank counts it)
    bool is_expert = false;        // reduced over the expert-data-parallel group
  };
  // What this rank updates of one parameter: the whole of it unless sharded.
  struct Segment {
    size_t slot = 0;
    int64_t offset = 0, numel = 0;  // in the flattened parameter
    at::Tensor master;              // fp32; the param (or a view of it) when it is fp32
    at::Tensor grad;                // a view of the main grad
    at::Tensor exp_avg, exp_avg_sq;
  };
  struct Bucket;
  void build_segments();
  void reduce_grads();
  void gather_params();
  void check_resident(const char* what) const;

  OptimizerConfig config_;
  dist::ProcessGroup* group_ = nullptr;            // null: alone
  dist::ProcessGroup* tp_group_ = nullptr;         // null: no tensor parallelism
  dist::ProcessGroup* ep_group_ = nullptr;         // null: no expert parallelism
  dist::ProcessGroup* expert_dp_group_ = nullptr;  // null: each rank's experts are its own
  int rank_ = 0, world_size_ = 1;
  bool sharded_ = false;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<Segment> segments_;
  std::unique_ptr<HostOffload> offload_;
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
  static LrScheduler from(const Args& args);

  double lr() const { return lr_at(num_steps_); }
  double lr_at(int64_t step) const;
  void step(int64_t increment = 1) { num_steps_ += increment; }

  int64_t num_steps() const { return num_steps_; }
  void set_num_steps(int64_t steps) { num_steps_ = steps; }
  const Config& config() const { return config_; }

 private:
  Config config_;
  int64_t num_steps_ = 0;
};

}  // namespace vime
