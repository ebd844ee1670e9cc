#include "vime/engine/native_engine.hpp"

#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

#include "vime/core/elapsed.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/engine/engine_request.hpp"
#include "vime/engine/model_runner.hpp"
#include "vime/engine/scheduler.hpp"
#include "vime/engine/tp_follower.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"

namespace vime::engine {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

RequestLimits request_limits(const Model& model, const NativeEngineOptions& options,
                             const Tokenizer* tokenizer) {
  RequestLimits limits{.vocab_size = model.config().vocab_size,
                       .max_context = options.max_context_len > 0
                                          ? options.max_context_len
                                          : model.config().max_position_embeddings,
                       .eos = options.eos_token_ids,
                       .tokenizer = tokenizer};
  if (limits.eos.empty() && tokenizer != nullptr)
    if (auto eos = tokenizer->eos_token_id()) limits.eos = {*eos};
  if (limits.max_context < 2)
    throw UsageError("NativeEngine: the context length must be at least 2 tokens");
  return limits;
}

void check_options(const NativeEngineOptions& options) {
  if (options.max_running_requests <= 0)
    throw UsageError("NativeEngine: max_running_requests must be positive");
  if (options.max_prefill_tokens <= 0)
    throw UsageError("NativeEngine: max_prefill_tokens must be positive");
  if (options.kv_block_size < 0 || options.kv_cache_blocks < 0 || options.max_kv_cache_bytes < 0)
    throw UsageError("NativeEngine: KV cache sizes must not be negative");
}

// Test-only: with VIME_TEST_OOM_AT_STEP=<n> set when an engine starts, its n-th step runs out of
// device memory once (as a CUDA allocator failure would), so CPU tests reach out_of_memory().
int64_t injected_out_of_memory_step() {
  const char* env = std::getenv("VIME_TEST_OOM_AT_STEP");
  return env != nullptr ? std::atoll(env) : 0;
}

void want_top_log_probs(EngineRequest& r, TopLogProbs& top, int64_t vocab_size) {
  if (top.count < 0)
    throw Error("generate: top log-probs per position must be >= 0, got " +
                std::to_string(top.count));
  r.top_logprobs = std::min(top.count, vocab_size);
  r.top_out = &top;
}

void want_prompt_log_probs(EngineRequest& r, PromptLogProbs& prompt, bool tensor_parallel) {
  if (tensor_parallel)
    throw Error("generate: prompt log-probs are not supported under tensor parallelism");
  if (prompt.count < 0)
    throw Error("generate: prompt log-prob alternatives per position must be >= 0, got " +
                std::to_string(prompt.count));
  prompt.positions.clear();
  r.prompt_out = &prompt;
}

}  // namespace

// The engine's thread runs each step as schedule -> run -> postprocess; submitted requests reach
// the scheduler between steps. On a TP rank > 0 there is no thread and no scheduler: the follower
// runs rank 0's plans.
struct NativeEngine::Impl {
  Impl(Model& m, const Tokenizer* t, NativeEngineOptions o);

  std::unique_ptr<EngineRequest> make_request(const GenerateRequest& request);
  void loop();
  bool has_work() const { return !submitted.empty() || scheduler->has_work(); }
  bool take_submitted(std::unique_lock<std::mutex>& lock);
  void score(std::vector<std::unique_ptr<EngineRequest>>& requests);
  void step(const std::string& version);
  void out_of_memory(const StepPlan& plan, const c10::OutOfMemoryError& e);
  void count(const StepPlan& plan, int64_t finished, double seconds);
  void abort_requests();
  void release();
  void publish();

  Model& model;
  const NativeEngineOptions options;
  const RequestLimits limits;
  ModelRunner runner;
  std::unique_ptr<Scheduler> scheduler;  // the engine's thread's
  std::unique_ptr<TpFollower> follower;

  mutable std::mutex mu;
  std::condition_variable wake;     // the engine's thread waits on it
  std::condition_variable changed;  // pause(), abort_all() and release_memory() wait on it
  std::deque<std::unique_ptr<EngineRequest>> submitted;  // not yet with the scheduler
  bool stopping = false, paused = false, idle = true, release_pending = false;
  bool prefix_reset_pending = false;
  uint64_t abort_epoch = 0, aborted_epoch = 0;
  std::string weight_version;
  uint64_t made = 0;
  int64_t waiting = 0;  // the scheduler's, as of its last step
  EngineStats totals;
  int64_t steps_run = 0;
  const int64_t oom_at_step = injected_out_of_memory_step();
  std::thread thread;
};

NativeEngine::Impl::Impl(Model& m, const Tokenizer* t, NativeEngineOptions o)
    : model(m),
      options(std::move(o)),
      limits(request_limits(m, options, t)),
      runner(m, options, limits.max_context) {
  const TensorParallel& tp = m.tensor_parallel();
  if (tp.is_parallel() && tp.rank != 0)
    follower = std::make_unique<TpFollower>(runner, *tp.group);
  else
    scheduler = std::make_unique<Scheduler>(options, runner.kv_budget());
}

std::unique_ptr<EngineRequest> NativeEngine::Impl::make_request(const GenerateRequest& request) {
  check_request(request, limits);
  uint64_t seed;
  {
    std::lock_guard lock(mu);
    seed = splitmix64(options.seed ^ splitmix64(made++));
  }
  return make_engine_request(request, limits, seed);
}

void NativeEngine::Impl::loop() {
  at::AutoGradMode no_grad(false);  // not InferenceMode: the trainer later trains these tensors
  c10::OptionalDeviceGuard device_guard;
  if (!model.device().is_cpu()) device_guard.reset_device(model.device());
  std::unique_lock lock(mu);
  while (true) {
    idle = true;
    changed.notify_all();
    wake.wait(lock, [&] {
      return stopping || abort_epoch != aborted_epoch || release_pending || (!paused && has_work());
    });
    if (stopping || abort_epoch != aborted_epoch) {
      abort_requests();
      if (stopping) return;
      continue;
    }
    if (release_pending) {
      release();
      continue;
    }
    idle = false;
    if (take_submitted(lock)) continue;  // prompts were scored: look again before the step
    if (std::exchange(prefix_reset_pending, false)) scheduler->reset_prefix_cache();
    const std::string version = weight_version;
    lock.unlock();
    step(version);
    lock.lock();
    publish();
  }
}

// Hands the submitted requests to the scheduler, after scoring the prompts of those that want
// prompt log-probs (without the lock). Returns whether it scored any.
bool NativeEngine::Impl::take_submitted(std::unique_lock<std::mutex>& lock) {
  std::vector<std::unique_ptr<EngineRequest>> requests;
  for (auto& r : submitted) requests.push_back(std::move(r));
  submitted.clear();
  const bool scoring = std::any_of(requests.begin(), requests.end(), [](const auto& r) {
    return r->prompt_out && !r->prompt_scored;
  });
  if (scoring) {
    lock.unlock();
    score(requests);
    lock.lock();
  }
  // In order (an abort meanwhile finishes them at the loop's top).
  for (auto& r : requests)
    if (r) scheduler->add(std::move(r));
  waiting = scheduler->stats().waiting;
  return scoring;
}

void NativeEngine::Impl::score(std::vector<std::unique_ptr<EngineRequest>>& requests) {
  std::vector<PromptToScore> prompts;
  std::vector<std::unique_ptr<EngineRequest>*> scored;
  for (auto& r : requests) {
    if (!r->prompt_out || r->prompt_scored) continue;
    prompts.push_back({&r->prompt, r->sampling.temperature, r->prompt_out});
    scored.push_back(&r);
  }
  try {
    score_prompts(model, prompts, options.max_prefill_tokens);
    for (auto* r : scored) (*r)->prompt_scored = true;
  } catch (...) {  // fails these requests, not the engine
    const auto error = std::current_exception();
    for (auto* r : scored) {
      (*r)->promise.set_exception(error);
      r->reset();
    }
  }
}

// One step: schedule -> run -> postprocess.
void NativeEngine::Impl::step(const std::string& version) {
  const auto start = std::chrono::steady_clock::now();
  StepPlan plan;
  try {
    plan = scheduler->schedule();
    if (plan.empty()) return;
    if (++steps_run == oom_at_step)
      throw c10::OutOfMemoryError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                                  "injected by VIME_TEST_OOM_AT_STEP");
    SampledTokens sampled = runner.run(plan);
    const int64_t finished = scheduler->postprocess(plan, sampled, version, runner.routing());
    count(plan, finished, seconds_since(start));
  } catch (const c10::OutOfMemoryError& e) {
    out_of_memory(plan, e);
  } catch (...) {
    // A failed step (NaN logits, a bad plan) fails the requests in it, not the engine.
    scheduler->fail_running(std::current_exception());
  }
}

// The device ran out of memory in a step (its activations did not fit beside the KV cache, or
// another process took the GPU): every running request is preempted and at most half as many run
// together from then on, so the step runs again smaller. A step of one request that does not fit
// fails it. Said once per engine, with the numbers; counted in stats().out_of_memory_steps.
void NativeEngine::Impl::out_of_memory(const StepPlan& plan, const c10::OutOfMemoryError& e) {
  core::empty_cuda_cache();
  const int64_t running = scheduler->running();
  const auto memory = core::cuda_memory(model.device().index() < 0 ? 0 : model.device().index());
  const std::string numbers = std::to_string(running) + " running requests, a step of " +
                              std::to_string(plan.decode_rows) + " decode rows and " +
                              std::to_string(plan.prefill_tokens) + " prefill tokens, KV cache " +
                              std::to_string(runner.kv_cache_bytes() >> 20) + " MiB" +
                              (memory ? "; device: " + core::describe(*memory) : "");
  if (running <= 1) {
    scheduler->fail_running(std::make_exception_ptr(Error(
        "engine: out of device memory in a step of one request (" + numbers +
        "); lower --rollout-gpu-memory-utilization (more room for activations) or the context")));
    return;
  }
  scheduler->preempt_all(running / 2);
  std::lock_guard lock(mu);
  if (totals.out_of_memory_steps++ == 0) {
    const std::string what = e.what();
    std::cerr << "engine: out of device memory (" << numbers << "): all " << running
              << " requests preempted, at most " << running / 2
              << " run together from now on; lower --rollout-gpu-memory-utilization to leave "
                 "more room for activations. ("
              << what.substr(0, what.find('\n')) << ")" << std::endl;
  }
}

void NativeEngine::Impl::count(const StepPlan& plan, int64_t finished, double seconds) {
  std::lock_guard lock(mu);
  totals.generated_tokens += static_cast<int64_t>(plan.samples.size());
  totals.requests_finished += finished;
  if (plan.prefill_tokens > 0) {
    totals.prefill_tokens += plan.prefill_tokens;
    totals.prefill_forwards += 1;
    totals.prefill_seconds += seconds;
  } else {
    totals.decode_steps += 1;
    totals.decode_tokens += plan.decode_rows;
    totals.decode_seconds += seconds;
  }
}

// Under the lock, as the remaining ones below.
void NativeEngine::Impl::abort_requests() {
  for (auto& r : submitted) r->finish("abort", weight_version);
  submitted.clear();
  scheduler->abort_all(weight_version);
  aborted_epoch = abort_epoch;
  publish();
  changed.notify_all();
}

void NativeEngine::Impl::release() {
  scheduler->release();
  runner.release();
  release_pending = false;
  publish();
  changed.notify_all();
}

// The scheduler's and the runner's counters, for stats().
void NativeEngine::Impl::publish() {
  const SchedulerStats s = scheduler->stats();
  waiting = s.waiting;
  totals.running = s.running;
  totals.preempted = s.preempted;
  totals.prefix_cached_tokens = s.prefix_cached_tokens;
  totals.kv_blocks_total = s.kv_blocks_total;
  totals.kv_blocks_used = s.kv_blocks_used;
  totals.kv_block_copies = s.kv_block_copies;
  totals.kv_cache_bytes = runner.kv_cache_bytes();
  totals.cuda_graphs = runner.cuda_graphs();
  const RunnerTimes& t = runner.times();
  totals.tp_plan_seconds = t.post_seconds;
  totals.forward_seconds = t.forward_seconds;
  totals.sample_seconds = t.sample_seconds;
}

NativeEngine::NativeEngine(Model& model, const Tokenizer* tokenizer, NativeEngineOptions options) {
  check_options(options);
  impl_ = std::make_unique<Impl>(model, tokenizer, std::move(options));
  if (!impl_->follower) impl_->thread = std::thread([this] { impl_->loop(); });
}

NativeEngine::~NativeEngine() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

GenerateResponse NativeEngine::generate(const GenerateRequest& request) {
  return submit(request, {}).get();
}

GenerateResponse NativeEngine::generate(const GenerateRequest& request, TopLogProbs* top,
                                        PromptLogProbs* prompt) {
  return submit(request, {}, top, prompt).get();
}

std::future<GenerateResponse> NativeEngine::submit(const GenerateRequest& request,
                                                   TokenCallback on_token, TopLogProbs* top,
                                                   PromptLogProbs* prompt) {
  if (impl_->follower)
    throw Error("generate: this engine follows tensor-parallel rank 0, which takes the requests");
  auto r = impl_->make_request(request);
  r->on_token = std::move(on_token);
  if (top) want_top_log_probs(*r, *top, impl_->limits.vocab_size);
  if (prompt) want_prompt_log_probs(*r, *prompt, impl_->model.tensor_parallel().is_parallel());
  auto result = r->promise.get_future();
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopping) throw Error("generate: the engine is shutting down");
    impl_->submitted.push_back(std::move(r));
  }
  impl_->wake.notify_all();
  return result;
}

void NativeEngine::abort_all() {
  if (impl_->follower) return;  // rank 0 holds the requests
  std::unique_lock lock(impl_->mu);
  for (auto& r : impl_->submitted) r->finish("abort", impl_->weight_version);
  impl_->submitted.clear();
  const uint64_t epoch = ++impl_->abort_epoch;
  impl_->wake.notify_all();
  impl_->changed.wait(lock, [&] { return impl_->aborted_epoch >= epoch || impl_->stopping; });
}

void NativeEngine::pause() {
  if (impl_->follower) return impl_->follower->pause();
  std::unique_lock lock(impl_->mu);
  impl_->paused = true;
  impl_->prefix_reset_pending = true;
  impl_->changed.wait(lock, [&] { return impl_->idle; });
  impl_->runner.park();
}

void NativeEngine::resume() {
  if (impl_->follower) return impl_->follower->resume();
  {
    std::lock_guard lock(impl_->mu);
    impl_->paused = false;
  }
  impl_->wake.notify_all();
}

void NativeEngine::release_memory() {
  if (impl_->follower) return impl_->follower->release_memory();
  std::unique_lock lock(impl_->mu);
  impl_->release_pending = true;
  impl_->wake.notify_all();
  impl_->changed.wait(lock, [&] { return !impl_->release_pending || impl_->stopping; });
}

void NativeEngine::reset_prefix_cache() {
  std::lock_guard lock(impl_->mu);
  impl_->prefix_reset_pending = true;
}

void NativeEngine::set_weight_version(std::string version) {
  std::lock_guard lock(impl_->mu);
  impl_->weight_version = std::move(version);
}

EngineStats NativeEngine::stats() const {
  std::lock_guard lock(impl_->mu);
  EngineStats s = impl_->totals;
  s.queued = static_cast<int64_t>(impl_->submitted.size()) + impl_->waiting;
  if (impl_->follower) {
    s.kv_cache_bytes = impl_->follower->kv_cache_bytes();
    s.decode_steps = impl_->follower->steps();  // forwards run for rank 0's steps
    s.tp_plan_seconds = impl_->follower->plan_wait_seconds();
    s.forward_seconds = impl_->follower->forward_seconds();
  }
  return s;
}

}  // namespace vime::engine
