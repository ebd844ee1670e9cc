#include "vime/train/optimizer.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "vime/core/args_lookup.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/train/adamw_update.hpp"
#include "vime/train/grad_buckets.hpp"
#include "vime/train/host_offload.hpp"

namespace vime {

OptimizerConfig OptimizerConfig::from(const Args& args) {
  if (args.has("optimizer") && args.get_string("optimizer") != "adam") {
    throw UsageError("--optimizer " + args.get_string("optimizer") +
                     ": vime trains with adam (AdamW) only");
  }
  OptimizerConfig c;
  c.beta1 = args.get_double("adam_beta1");
  c.beta2 = args.get_double("adam_beta2");
  c.eps = args.get_double("adam_eps");
  c.weight_decay = args.get_double("weight_decay");
  c.clip_grad = args.get_double("clip_grad");
  c.distributed = core::flag_on(args, "use_distributed_optimizer");
  return c;
}

TensorParallelNorm TensorParallelNorm::of(const Model& model) {
  TensorParallelNorm n;
  if (!model.tensor_parallel().is_parallel()) return n;
  n.group = model.tensor_parallel().group;
  const auto& params = model.named_parameters();
  for (size_t i = 0; i < params.size(); ++i)
    if (model.parameter_slices()[i].is_duplicate) n.duplicates.insert(params[i].first);
  const auto& adapters = model.lora_parameters();
  for (size_t i = 0; i < adapters.size(); ++i)
    if (model.lora_slices()[i].is_duplicate) n.duplicates.insert(adapters[i].first);
  return n;
}

ExpertGrads ExpertGrads::of(const Model& model) {
  ExpertGrads e;
  const auto& ep = model.expert_parallel();
  if (!ep.is_parallel()) return e;
  e.expert_parallel = ep.group;
  e.data_parallel = ep.data_parallel;
  const auto& params = model.named_parameters();
  for (size_t i = 0; i < params.size(); ++i)
    if (model.parameter_slices()[i].group != nullptr) e.names.insert(params[i].first);
  return e;
}

// A flat fp32 bucket of main grads and, when sharded, this rank's state of its shard. Dense
// parameters' buckets are reduced (and sharded) over the data-parallel group, experts' over the
// expert-data-parallel group (`group` null: this rank alone).
struct Optimizer::Bucket {
  GradBucketLayout layout;
  dist::ProcessGroup* group = nullptr;
  int rank = 0, size = 1;
  at::Tensor grads;  // [layout.numel] fp32, the main grads' storage
  at::ScalarType param_dtype = at::kFloat;
  int64_t shard_begin = 0, shard_numel = 0;  // this rank's range (sharded)
  at::Tensor master, exp_avg, exp_avg_sq;    // [shard_numel] fp32 (sharded; master: low precision)
};

Optimizer::Optimizer(const NamedTensorList& parameters, OptimizerConfig config,
                     dist::ProcessGroup* group, TensorParallelNorm tp, ExpertGrads experts)
    : config_(config), group_(group) {
  if (tp.group != nullptr && tp.group->size() > 1) tp_group_ = tp.group;
  if (experts.expert_parallel != nullptr && experts.expert_parallel->size() > 1) {
    ep_group_ = experts.expert_parallel;
    if (experts.data_parallel != nullptr && experts.data_parallel->size() > 1)
      expert_dp_group_ = experts.data_parallel;
  }
  if (group_ != nullptr) {
    rank_ = group_->rank();
    world_size_ = group_->size();
  }
  if (world_size_ == 1) group_ = nullptr;  // a world of one: not a single collective
  sharded_ = config_.distributed && world_size_ > 1;
  std::vector<at::Tensor> params;
  for (const auto& [name, param] : parameters) {
    if (!param.is_contiguous()) {
      throw Error("optimizer: parameter " + name + " is not contiguous");
    }
    Slot s;
    s.name = name;
    s.param = param;
    s.has_weight_decay = param.dim() > 1 && !name.ends_with(".bias");
    s.is_tp_duplicate = tp.duplicates.count(name) > 0;
    s.is_expert = ep_group_ != nullptr && experts.names.count(name) > 0;
    slots_.push_back(std::move(s));
    params.push_back(param);
  }
  // Dense parameters' buckets, then the experts' (padded for their own group's shards).
  std::vector<std::pair<GradBucketLayout, bool>> layouts;
  for (const bool expert : {false, true}) {
    std::vector<size_t> index;
    std::vector<at::Tensor> subset;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].is_expert != expert) continue;
      index.push_back(i);
      subset.push_back(params[i]);
    }
    if (subset.empty()) continue;
    const int64_t shards = expert ? (expert_dp_group_ ? expert_dp_group_->size() : 1) : world_size_;
    for (auto& layout :
         plan_grad_buckets(subset, std::max<int64_t>(config_.bucket_elements, 1), shards)) {
      for (auto& p : layout.params) p = index[p];
      layouts.emplace_back(std::move(layout), expert);
    }
  }
  for (auto& [layout, expert] : layouts) {
    Bucket b;
    b.group = expert ? expert_dp_group_ : group_;
    if (b.group != nullptr) {
      b.rank = b.group->rank();
      b.size = b.group->size();
    }
    b.param_dtype = params[layout.params.front()].scalar_type();
    b.grads = at::zeros({layout.numel}, params[layout.params.front()].options().dtype(at::kFloat));
    for (size_t k = 0; k < layout.params.size(); ++k) {
      auto& s = slots_[layout.params[k]];
      s.bucket = buckets_.size();
      s.bucket_offset = layout.offsets[k];
      s.main_grad = b.grads.narrow(0, s.bucket_offset, s.param.numel()).view(s.param.sizes());
    }
    if (sharded_) {
      b.shard_numel = layout.numel / b.size;
      b.shard_begin = b.shard_numel * b.rank;
      b.exp_avg = at::zeros({b.shard_numel}, b.grads.options());
      b.exp_avg_sq = at::zeros({b.shard_numel}, b.grads.options());
      if (b.param_dtype != at::kFloat) b.master = at::zeros({b.shard_numel}, b.grads.options());
    }
    b.layout = std::move(layout);
    buckets_.push_back(std::move(b));
  }
  build_segments();
  sync_masters_from_params();
}

Optimizer::~Optimizer() = default;

void Optimizer::build_segments() {
  segments_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& s = slots_[i];
    const bool is_fp32 = s.param.scalar_type() == at::kFloat;
    if (!sharded_) {
      Segment g;
      g.slot = i;
      g.numel = s.param.numel();
      g.master = is_fp32 ? s.param : s.param.detach().to(at::kFloat);
      g.grad = s.main_grad;
      g.exp_avg = at::zeros_like(s.main_grad);
      g.exp_avg_sq = at::zeros_like(s.main_grad);
      segments_.push_back(std::move(g));
      continue;
    }
    // The part of [bucket_offset, bucket_offset + numel) inside this rank's shard.
    const auto& b = buckets_[s.bucket];
    const int64_t begin = std::max(s.bucket_offset, b.shard_begin);
    const int64_t end = std::min(s.bucket_offset + s.param.numel(), b.shard_begin + b.shard_numel);
    if (begin >= end) continue;
    Segment g;
    g.slot = i;
    g.offset = begin - s.bucket_offset;
    g.numel = end - begin;
    const int64_t in_shard = begin - b.shard_begin;
    g.master = is_fp32 ? s.param.detach().view(-1).narrow(0, g.offset, g.numel)
                       : b.master.narrow(0, in_shard, g.numel);
    g.grad = b.grads.narrow(0, begin, g.numel);
    g.exp_avg = b.exp_avg.narrow(0, in_shard, g.numel);
    g.exp_avg_sq = b.exp_avg_sq.narrow(0, in_shard, g.numel);
    segments_.push_back(std::move(g));
  }
}

void Optimizer::check_resident(const char* what) const {
  if (is_offloaded()) {
    throw Error(std::string("optimizer: ") + what +
                " while its state is offloaded to host memory (--offload-train): call reload() "
                "first");
  }
}

void Optimizer::sync_masters_from_params() {
  check_resident("sync_masters_from_params");
  at::NoGradGuard no_grad;
  for (auto& g : segments_) {
    const auto& param = slots_[g.slot].param;
    if (g.master.is_same(param) || param.scalar_type() == at::kFloat) continue;
    if (sharded_) {
      g.master.copy_(param.detach().view(-1).narrow(0, g.offset, g.numel));
    } else {
      g.master.copy_(param);
    }
  }
}

void Optimizer::accumulate_grads() {
  check_resident("accumulate_grads");
  for (auto& s : slots_) {
    if (!s.param.grad().defined()) continue;
    s.main_grad.add_(s.param.grad());  // fp32 += bf16 in one kernel: no fp32 copy of the grad
    s.param.mutable_grad() = at::Tensor();
  }
}

std::vector<at::Tensor> Optimizer::main_grads() const {
  std::vector<at::Tensor> out;
  for (const auto& s : slots_) out.push_back(s.main_grad);
  return out;
}

void Optimizer::zero_grad() {
  check_resident("zero_grad");
  for (auto& b : buckets_) b.grads.zero_();
  for (auto& s : slots_) s.param.mutable_grad() = at::Tensor();
}

// The mean over the ranks: all of every bucket, or this rank's shard of it (reduce-scattered in
// place: the shard is a view of the bucket, as NCCL's in-place reduce-scatter expects).
void Optimizer::reduce_grads() {
  if (group_ == nullptr) return;
  const double w = static_cast<double>(world_size_);
  for (auto& b : buckets_) {
    if (b.group == nullptr) {  // experts no other rank holds
      b.grads.div_(w);
    } else if (sharded_) {
      auto shard = b.grads.narrow(0, b.shard_begin, b.shard_numel);
      b.group->reduce_scatter(shard, b.grads);
      shard.div_(w);
    } else {
      std::vector<at::Tensor> t{b.grads};
      b.group->all_reduce(t);
      b.grads.div_(w);
    }
  }
}

// Every rank's updated shard of each bucket into every rank's parameters.
void Optimizer::gather_params() {
  for (auto& b : buckets_) {
    auto full = at::zeros({b.layout.numel}, b.grads.options().dtype(b.param_dtype));
    auto mine = full.narrow(0, b.shard_begin, b.shard_numel);
    for (const auto& g : segments_) {
      const auto& s = slots_[g.slot];
      if (s.bucket != static_cast<size_t>(&b - buckets_.data())) continue;
      mine.narrow(0, s.bucket_offset + g.offset - b.shard_begin, g.numel).copy_(g.master);
    }
    if (b.group != nullptr) {
      std::vector<at::Tensor> parts;
      for (int r = 0; r < b.size; ++r)
        parts.push_back(full.narrow(0, r * b.shard_numel, b.shard_numel));
      b.group->all_gather(parts, mine.clone());
    }
    for (size_t k = 0; k < b.layout.params.size(); ++k) {
      auto& s = slots_[b.layout.params[k]];
      s.param.detach().view(-1).copy_(full.narrow(0, b.layout.offsets[k], s.param.numel()));
    }
  }
}

StepResult Optimizer::step(double lr) {
  check_resident("step");
  at::NoGradGuard no_grad;
  reduce_grads();
  StepResult result;
  at::Tensor sum_sq, expert_sq;
  for (const auto& g : segments_) {
    if (slots_[g.slot].is_tp_duplicate) continue;
    auto sq = g.grad.pow(2).sum().to(at::kDouble);
    at::Tensor& into = slots_[g.slot].is_expert ? expert_sq : sum_sq;
    into = into.defined() ? into + sq : sq;
  }
  auto sum_over = [&](at::Tensor& value, dist::ProcessGroup* over) {
    if (over == nullptr) return;
    if (!value.defined())
      value = at::zeros({}, buckets_.front().grads.options().dtype(at::kDouble));
    std::vector<at::Tensor> t{value.reshape({1})};
    over->all_reduce(t);
    value = t[0];
  };
  // The global norm: every rank's sum of squares, summed over the data-parallel shards (the
  // experts': over their expert-data-parallel shards, then over the expert-parallel ranks, which
  // hold different experts) and the tensor-parallel ranks.
  if (ep_group_ != nullptr) {
    sum_over(expert_sq, sharded_ ? expert_dp_group_ : nullptr);
    sum_over(expert_sq, ep_group_);
  }
  sum_over(sum_sq, sharded_ ? group_ : nullptr);
  if (expert_sq.defined()) sum_sq = sum_sq.defined() ? sum_sq + expert_sq : expert_sq;
  sum_over(sum_sq, tp_group_);
  result.grad_norm = sum_sq.defined() ? std::sqrt(sum_sq.item<double>()) : 0.0;
  if (!std::isfinite(result.grad_norm)) {  // the same on every rank: reduced grads, summed norm
    zero_grad();
    return result;
  }
  double clip = 1.0;
  if (config_.clip_grad > 0) {
    const double coeff = config_.clip_grad / (result.grad_norm + 1e-6);
    if (coeff < 1.0) clip = coeff;
  }
  ++num_steps_;
  // Two lists, with and without weight decay, each one fused update on CUDA.
  train::AdamWTensors decayed, plain;
  for (auto& g : segments_) {
    const auto& s = slots_[g.slot];
    auto& list = s.has_weight_decay && config_.weight_decay != 0 ? decayed : plain;
    list.params.push_back(g.master);
    list.grads.push_back(g.grad);
    list.exp_avgs.push_back(g.exp_avg);
    list.exp_avg_sqs.push_back(g.exp_avg_sq);
  }
  train::AdamWHyper hyper{lr, config_.beta1, config_.beta2, config_.eps, 0.0, clip, num_steps_};
  train::adamw_update(plain, hyper);
  hyper.weight_decay = config_.weight_decay;
  train::adamw_update(decayed, hyper);
  if (!sharded_) {
    for (auto& g : segments_) {
      const auto& s = slots_[g.slot];
      if (!g.master.is_same(s.param)) s.param.copy_(g.master);
    }
  }
  if (sharded_) gather_params();
  for (auto& b : buckets_) b.grads.zero_();
  result.is_updated = true;
  return result;
}

void Optimizer::offload() {
  if (is_offloaded()) return;
  std::vector<at::Tensor> tensors;
  for (const auto& b : buckets_) {
    for (const auto* t : {&b.grads, &b.master, &b.exp_avg, &b.exp_avg_sq}) tensors.push_back(*t);
  }
  for (const auto& g : segments_) {
    if (!sharded_) {
      tensors.push_back(g.exp_avg);
      tensors.push_back(g.exp_avg_sq);
      if (!g.master.is_same(slots_[g.slot].param)) tensors.push_back(g.master);
    }
  }
  if (!offload_) offload_ = std::make_unique<HostOffload>();
  offload_->offload(tensors);
}

void Optimizer::reload() {
  if (offload_) offload_->reload();
}

bool Optimizer::is_offloaded() const { return offload_ && offload_->is_offloaded(); }

NamedTensorList Optimizer::state_tensors() const {
  check_resident("state_tensors");
  if (sharded_) {
    throw Error("optimizer: state_tensors() of a sharded optimizer; use state_segments()");
  }
  NamedTensorList out;
  for (const auto& g : segments_) {
    const auto& s = slots_[g.slot];
    out.emplace_back("exp_avg." + s.name, g.exp_avg);
    out.emplace_back("exp_avg_sq." + s.name, g.exp_avg_sq);
    if (!g.master.is_same(s.param)) out.emplace_back("master." + s.name, g.master);
  }
  return out;
}

NamedTensorList Optimizer::gathered_state_tensors() const {
  if (!sharded_) return state_tensors();
  check_resident("gathered_state_tensors");
  NamedTensorList out;
  for (const auto& b : buckets_) {
    std::vector<std::pair<std::string, const at::Tensor*>> keys{{"exp_avg", &b.exp_avg},
                                                                {"exp_avg_sq", &b.exp_avg_sq}};
    if (b.param_dtype != at::kFloat) keys.emplace_back("master", &b.master);
    for (const auto& [key, shard] : keys) {
      auto full = at::empty({b.layout.numel}, shard->options());
      if (b.group == nullptr) {
        full.copy_(*shard);
      } else {
        std::vector<at::Tensor> parts;
        for (int r = 0; r < b.size; ++r)
          parts.push_back(full.narrow(0, r * b.shard_numel, b.shard_numel));
        b.group->all_gather(parts, shard->contiguous());
      }
      for (size_t k = 0; k < b.layout.params.size(); ++k) {
        const auto& s = slots_[b.layout.params[k]];
        out.emplace_back(
            key + "." + s.name,
            full.narrow(0, b.layout.offsets[k], s.param.numel()).view(s.param.sizes()));
      }
    }
  }
  return out;
}

std::vector<StateSegment> Optimizer::state_segments() const {
  check_resident("state_segments");
  std::vector<StateSegment> out;
  for (const auto& g : segments_) {
    const auto& s = slots_[g.slot];
    StateSegment seg;
    seg.name = s.name;
    seg.shape = s.param.sizes().vec();
    seg.offset = g.offset;
    seg.numel = g.numel;
    seg.values.emplace_back("exp_avg", g.exp_avg.reshape(-1));
    seg.values.emplace_back("exp_avg_sq", g.exp_avg_sq.reshape(-1));
    if (s.param.scalar_type() != at::kFloat)
      seg.values.emplace_back("master", g.master.reshape(-1));
    out.push_back(std::move(seg));
  }
  return out;
}

void Optimizer::load_state(const StateReader& read, int64_t num_steps) {
  check_resident("load_state");
  at::NoGradGuard no_grad;
  for (auto& g : segments_) {
    const auto& s = slots_[g.slot];
    auto copy = [&](const std::string& key, at::Tensor& dst) {
      dst.view(-1).copy_(read(key + "." + s.name, s.param.sizes(), g.offset, g.numel));
    };
    copy("exp_avg", g.exp_avg);
    copy("exp_avg_sq", g.exp_avg_sq);
    if (s.param.scalar_type() != at::kFloat) copy("master", g.master);
  }
  // fp32 parameters are their own masters: the model's weights, loaded with the checkpoint.
  num_steps_ = num_steps;
}

void Optimizer::load_state_tensors(const NamedTensorList& tensors, int64_t num_steps,
                                   const std::string& where) {
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : tensors) by_name[name] = &t;
  load_state(
      [&](const std::string& key, at::IntArrayRef shape, int64_t offset, int64_t numel) {
        auto it = by_name.find(key);
        if (it == by_name.end()) {
          throw Error(where + ": optimizer state \"" + key +
                      "\" is missing (load with --no-load-optim to start the optimizer afresh)");
        }
        if (it->second->sizes() != shape) {
          throw Error(where + ": optimizer state \"" + key + "\" has shape " +
                      c10::str(it->second->sizes()) + ", expected " + c10::str(shape));
        }
        return it->second->reshape(-1).narrow(0, offset, numel);
      },
      num_steps);
}

LrScheduler::LrScheduler(Config config) : config_(std::move(config)) {
  if (config_.decay_style != "constant" && config_.decay_style != "linear" &&
      config_.decay_style != "cosine") {
    throw UsageError("--lr-decay-style " + config_.decay_style +
                     ": vime supports constant, linear and cosine");
  }
}

LrScheduler LrScheduler::from(const Args& args) {
  Config c;
  c.max_lr = args.get_double("lr");
  c.min_lr = args.get_double("min_lr");
  c.warmup_init_lr = args.get_double("lr_warmup_init");
  c.decay_style = args.get_string("lr_decay_style");
  const int64_t train_iters = args.get_optional_int("train_iters").value_or(0);
  c.decay_steps = args.get_optional_int("lr_decay_iters").value_or(train_iters);
  if (args.is_set("lr_warmup_iters") && args.get_int("lr_warmup_iters") > 0) {
    c.warmup_steps = args.get_int("lr_warmup_iters");
  } else if (args.is_set("lr_warmup_fraction")) {
    c.warmup_steps = static_cast<int64_t>(args.get_double("lr_warmup_fraction") *
                                          static_cast<double>(c.decay_steps));
  }
  return LrScheduler(c);
}

double LrScheduler::lr_at(int64_t step) const {
  const auto& c = config_;
  if (c.warmup_steps > 0 && step <= c.warmup_steps) {
    return c.warmup_init_lr +
           (c.max_lr - c.warmup_init_lr) * static_cast<double>(step) / double(c.warmup_steps);
  }
  if (c.decay_style == "constant" || c.decay_steps <= c.warmup_steps) return c.max_lr;
  if (step > c.decay_steps) return c.min_lr;
  const double ratio =
      static_cast<double>(step - c.warmup_steps) / double(c.decay_steps - c.warmup_steps);
  const double coeff = c.decay_style == "linear" ? 1.0 - ratio : 0.5 * (std::cos(M_PI * ratio) + 1);
  return c.min_lr + coeff * (c.max_lr - c.min_lr);
}

void Optimizer::reset_states() {
  check_resident("reset_states");
  for (auto& segment : segments_) {
    segment.exp_avg.zero_();
    segment.exp_avg_sq.zero_();
  }
  num_steps_ = 0;
}

}  // namespace vime
