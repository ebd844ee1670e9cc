#include "vime/engine/tp_follower.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>

#include <chrono>

#include "vime/core/elapsed.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/engine/decode_graph.hpp"
#include "vime/error.hpp"
#include "vime/model/cached_forward.hpp"
#include "vime/model/model.hpp"
#include "vime/model/paged_kv_cache.hpp"

namespace vime::engine {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void unexpected_plan(const std::string& what) {
  throw Error("tensor-parallel engine: TP rank 0 posted " + what +
              "; every rank must make its engine with the same options");
}

}  // namespace

TpFollower::TpFollower(Model& model, std::unique_ptr<PagedKvCache> cache,
                       std::unique_ptr<DecodeGraphRunner> decode_runner,
                       std::unique_ptr<TpPlanChannel> channel, PagedAttentionPath path)
    : model_(model),
      cache_(std::move(cache)),
      decode_runner_(std::move(decode_runner)),
      channel_(std::move(channel)),
      path_(path) {
  thread_ = std::thread([this] { follow(); });
}

TpFollower::~TpFollower() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void TpFollower::follow() {
  at::AutoGradMode no_grad(false);  // not InferenceMode: the trainer later trains these tensors
  c10::OptionalDeviceGuard device_guard;
  if (!model_.device().is_cpu()) device_guard.reset_device(model_.device());
  auto stop = [&] {
    std::lock_guard lock(mu_);
    return stopping_;
  };
  try {
    while (true) {
      const auto waiting = Clock::now();
      auto plan = channel_->next(stop);
      {
        std::lock_guard lock(mu_);
        plan_wait_seconds_ += seconds_since(waiting);
      }
      if (!plan || plan->op == TpStepPlan::Op::kStop) break;
      if (plan->op == TpStepPlan::Op::kStep) {
        {
          std::unique_lock lock(mu_);
          changed_.wait(lock, [&] { return stopping_ || resumes_ >= parks_seen_; });
          if (stopping_) break;
        }
        run_step(*plan);
        continue;
      }
      if (plan->op == TpStepPlan::Op::kRelease) {
        if (decode_runner_) decode_runner_->reset();
        cache_->release();
      }
      std::lock_guard lock(mu_);
      if (plan->op == TpStepPlan::Op::kPark) parks_seen_ = plan->epoch;
      if (plan->op == TpStepPlan::Op::kRelease) releases_seen_ = plan->epoch;
      kv_bytes_ = cache_->bytes();
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mu_);
    error_ = std::current_exception();
  }
  std::lock_guard lock(mu_);
  done_ = true;
  changed_.notify_all();
}

void TpFollower::run_step(const TpStepPlan& plan) {
  const auto start = Clock::now();
  cache_->resize(std::max(plan.num_blocks, cache_->num_blocks()));
  cache_->copy_blocks(plan.copies);
  // Rank 0 samples from the same logits.
  if (plan.fixed_shape_decode) {
    std::vector<DecodeRow> rows;
    for (const auto& s : plan.sequences) {
      if (s.end - s.begin != 1) unexpected_plan("a decode row of more than one position");
      rows.push_back({s.tokens[0], s.begin, s.block_table});
    }
    if (!decode_runner_ || !decode_runner_->accepts(rows))
      unexpected_plan("a fixed-shape decode step this rank's engine cannot run");
    (void)decode_runner_->run(rows, plan.capture_graph);
  } else {
    std::vector<PagedSequence> batch;
    for (const auto& s : plan.sequences)
      batch.push_back({s.tokens, s.begin, s.end, &s.block_table, s.wants_logits, s.begin});
    (void)paged_forward(model_, *cache_, batch, path_);
  }
  std::lock_guard lock(mu_);
  ++steps_;
  kv_bytes_ = cache_->bytes();
  forward_seconds_ += seconds_since(start);
}

void TpFollower::wait_for(const int64_t& seen, int64_t wanted) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return seen >= wanted || done_; });
  if (error_) std::rethrow_exception(error_);
  if (seen < wanted)
    throw Error("tensor-parallel engine: TP rank 0's engine stopped while this rank waited for it");
}

void TpFollower::pause() {
  int64_t wanted;
  {
    std::lock_guard lock(mu_);
    wanted = ++pauses_;
  }
  wait_for(parks_seen_, wanted);
}

void TpFollower::resume() {
  {
    std::lock_guard lock(mu_);
    ++resumes_;
  }
  changed_.notify_all();
}

void TpFollower::release_memory() {
  int64_t wanted;
  {
    std::lock_guard lock(mu_);
    wanted = ++releases_;
  }
  wait_for(releases_seen_, wanted);
}

int64_t TpFollower::kv_cache_bytes() const {
  std::lock_guard lock(mu_);
  return kv_bytes_;
}

int64_t TpFollower::steps() const {
  std::lock_guard lock(mu_);
  return steps_;
}

double TpFollower::plan_wait_seconds() const {
  std::lock_guard lock(mu_);
  return plan_wait_seconds_;
}

double TpFollower::forward_seconds() const {
  std::lock_guard lock(mu_);
  return forward_seconds_;
}

int64_t agreed_kv_blocks(const TensorParallel& tp, int64_t blocks) {
  if (!tp.is_parallel()) return blocks;
  std::vector<at::Tensor> t{
      at::full({1}, blocks, at::TensorOptions().dtype(at::kLong).device(tp.group->device()))};
  tp.group->all_reduce(t, dist::ReduceOp::kMin);
  return t[0].item<int64_t>();
}

}  // namespace vime::engine
