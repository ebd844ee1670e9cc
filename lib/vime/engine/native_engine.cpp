#include "vime/engine/native_engine.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>

#include <chrono>
#include <exception>

#include "vime/core/elapsed.hpp"
#include "vime/engine/kv_cache_budget.hpp"
#include "vime/engine/native_engine_impl.hpp"
#include "vime/error.hpp"
#include "vime/model/cached_forward.hpp"

namespace vime::engine {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<int32_t> resolve_eos(const NativeEngineOptions& options, const Tokenizer* tokenizer) {
  if (!options.eos_token_ids.empty() || tokenizer == nullptr) return options.eos_token_ids;
  if (auto eos = tokenizer->eos_token_id()) return {*eos};
  return {};
}

}  // namespace

NativeEngine::Impl::Impl(Model& m, const Tokenizer* t, NativeEngineOptions o)
    : model(m),
      tokenizer(t),
      options(std::move(o)),
      eos(resolve_eos(options, t)),
      max_context(options.max_context_len > 0 ? options.max_context_len
                                              : m.config().max_position_embeddings),
      cache(kv_cache_config(m), m.dtype(), m.device(), options.max_running_requests, max_context) {
  if (options.paged_kv) {
    budget = kv_cache_budget(m, options, max_context);
    budget.max_blocks = agreed_kv_blocks(m.tensor_parallel(), budget.max_blocks);
    paged = std::make_unique<PagedKvCache>(kv_cache_config(m), m.dtype(), m.device(),
                                           budget.block_size);
    reset_blocks();
    // Every tensor-parallel rank has one (rank 0 tells the others when to use it).
    if (options.attention_path == PagedAttentionPath::kAuto &&
        options.fixed_shape_decode.value_or(m.device().is_cuda()))
      decode_runner = std::make_unique<DecodeGraphRunner>(
          m, *paged, options.max_running_requests,
          (max_context + budget.block_size - 1) / budget.block_size, options.cuda_graphs,
          options.decode_kernel);
  }
}

std::unique_ptr<EngineRequest> NativeEngine::Impl::make_request(const GenerateRequest& request) {
  const auto& ids = request.input_ids;
  const auto& params = request.sampling_params;
  const int64_t vocab = model.config().vocab_size;
  if (ids.empty()) throw Error("generate: the prompt is empty (input_ids has no tokens)");
  if (static_cast<int64_t>(ids.size()) >= max_context)
    throw Error("generate: the prompt has " + std::to_string(ids.size()) +
                " tokens but the engine's context holds " + std::to_string(max_context) +
                " (prompt + output); shorten it or raise --rollout-max-context-len");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error("generate: input_ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                  " is outside the model's vocabulary (0.." + std::to_string(vocab - 1) + ")");
  if (params.repetition_penalty != 1.0)
    throw Error(
        "sampling_params.repetition_penalty is not supported by the native engine; "
        "leave it at 1");
  if (!params.stop.empty() && tokenizer == nullptr)
    throw Error("sampling_params.stop needs a tokenizer; the engine was built without one");
  uint64_t fallback_seed;
  {
    std::lock_guard lock(mu);
    fallback_seed = splitmix64(options.seed ^ splitmix64(submitted++));
  }
  auto r = std::make_unique<EngineRequest>();
  r->prompt = ids;
  r->sequence = ids;
  r->return_logprob = request.return_logprob;
  r->sampling = make_row_sampling(params, eos, fallback_seed);
  TokenTextFn decode;
  if (!params.stop.empty()) {
    r->text = TextStream::make(*tokenizer, params.skip_special_tokens);
    decode = [text = r->text.get()](int32_t id) { return text->step(id); };
  }
  r->checker = std::make_unique<StopChecker>(r->sampling, static_cast<int64_t>(ids.size()),
                                             max_context, std::move(decode), params.no_stop_trim);
  return r;
}

void NativeEngine::Impl::finish(EngineRequest& r, const char* reason, const std::string& version) {
  GenerateResponse response;
  response.output_ids = std::move(r.output_ids);
  if (r.return_logprob) response.output_log_probs = std::move(r.log_probs);
  if (r.top_out) r.top_out->positions = std::move(r.top);
  response.finish_reason = reason;
  response.weight_version = version;
  response.prompt_tokens = static_cast<int64_t>(r.prompt.size());
  response.cached_tokens = r.cached_tokens;
  r.promise.set_value(std::move(response));
}

void NativeEngine::Impl::abort_everything() {
  for (auto& r : running) {
    if (!r) continue;
    release_blocks(*r);
    finish(*r, "abort", weight_version);
  }
  running.clear();
  for (auto& r : queue) finish(*r, "abort", weight_version);
  queue.clear();
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
      return stopping || abort_epoch != aborted_epoch || release_pending ||
             (!paused && (!queue.empty() || !running.empty()));
    });
    if (stopping || abort_epoch != aborted_epoch) {
      abort_everything();
      aborted_epoch = abort_epoch;
      totals.running = 0;
      changed.notify_all();
      if (stopping) return;
      continue;
    }
    if (release_pending) {
      cache.release();
      for (auto& r : running) {
        r->cached = 0;
        r->blocks.clear();
      }
      if (paged) {
        paged->release();
        reset_blocks();
        if (decode_runner) decode_runner->reset();
      }
      if (tp_leader) tp_leader->post({.op = TpStepPlan::Op::kRelease, .epoch = ++tp_releases});
      totals.kv_cache_bytes = 0;
      changed.notify_all();
      release_pending = false;
      continue;
    }
    idle = false;
    if (auto unscored = take_unscored(); !unscored.empty()) {
      lock.unlock();
      score(unscored);
      lock.lock();
      // Back to the front, in order (an abort meanwhile finishes them at the loop's top).
      for (auto it = unscored.rbegin(); it != unscored.rend(); ++it)
        if (*it) queue.push_front(std::move(*it));
      continue;
    }
    if (prefix_reset_pending && blocks) blocks->reset_prefix_cache();
    prefix_reset_pending = false;
    if (!paged) {
      while (!queue.empty() &&
             static_cast<int64_t>(running.size()) < options.max_running_requests) {
        running.push_back(std::move(queue.front()));
        queue.pop_front();
      }
    }
    const std::string version = weight_version;
    lock.unlock();
    try {
      if (paged)
        step_paged(version);
      else
        step_contiguous(version);
    } catch (...) {
      // A failed step (out of memory, NaN logits) fails the requests in it, not the engine.
      const auto error = std::current_exception();
      for (auto& r : running) {
        if (!r) continue;
        release_blocks(*r);
        r->promise.set_exception(error);
      }
      running.clear();
    }
    lock.lock();
    totals.kv_cache_bytes = paged ? paged->bytes() : cache.bytes();
    if (blocks) {
      totals.kv_blocks_total = blocks->num_blocks();
      totals.kv_blocks_used = blocks->used_blocks();
      totals.kv_block_copies = blocks->copies_made();
    }
    totals.running = static_cast<int64_t>(running.size());
    if (decode_runner) totals.cuda_graphs = decode_runner->graphs_captured();
  }
}

void NativeEngine::Impl::sample_rows(const at::Tensor& logits, const std::vector<int64_t>& rows,
                                     const std::string& version) {
  std::vector<SamplerRow> sampler_rows;
  for (int64_t row : rows) {
    const EngineRequest& r = *running[row];
    sampler_rows.push_back(
        {&r.sampling, static_cast<int64_t>(r.output_ids.size()), r.top_logprobs});
  }
  SampledTokens sampled =
      sample_tokens(logits, sampler_rows, options.logprob_mode, options.sampler_path);
  int64_t finished = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    EngineRequest& r = *running[rows[k]];
    r.output_ids.push_back(sampled.token_ids[k]);
    r.sequence.push_back(sampled.token_ids[k]);
    if (r.top_logprobs > 0) r.top.push_back(std::move(sampled.top[k]));
    r.log_probs.push_back(sampled.log_probs[k]);
    const StopResult result = r.checker->on_token(sampled.token_ids[k]);
    const char* reason = result.done() ? finish_reason_name(result.reason) : nullptr;
    const bool wanted =
        !r.on_token || r.on_token(sampled.token_ids[k], sampled.log_probs[k], reason);
    if (!reason && wanted) continue;
    release_blocks(r);
    finish(r, reason ? reason : "abort", version);
    running[rows[k]].reset();
    ++finished;
  }
  std::lock_guard lock(mu);
  totals.generated_tokens += static_cast<int64_t>(rows.size());
  totals.requests_finished += finished;
}

void NativeEngine::Impl::compact() {
  size_t hole = 0, end = running.size();
  while (true) {
    while (hole < end && running[hole]) ++hole;
    while (end > hole && !running[end - 1]) --end;
    if (hole >= end) break;
    cache.move_row(static_cast<int64_t>(end - 1), static_cast<int64_t>(hole),
                   running[end - 1]->cached);
    running[hole] = std::move(running[end - 1]);
    --end;
  }
  running.resize(end);
}

void NativeEngine::Impl::fit_memory() {
  if (options.max_kv_cache_bytes <= 0) return;
  // Keep the longest prefix of rows whose next step fits (at least one row); the rest go back
  // to the front of the queue, in order, losing their cache.
  size_t keep = 0;
  int64_t longest = 0;
  for (; keep < running.size(); ++keep) {
    const int64_t need = std::max(longest, running[keep]->length() + 1);
    if (keep > 0 && cache.bytes_after_reserve(static_cast<int64_t>(keep + 1), need) >
                        options.max_kv_cache_bytes)
      break;
    longest = need;
  }
  if (keep == running.size()) return;
  std::lock_guard lock(mu);
  for (size_t i = running.size(); i-- > keep;) {
    totals.preempted += running[i]->cached > 0;
    running[i]->cached = 0;
    queue.push_front(std::move(running[i]));
  }
  running.resize(keep);
}

void NativeEngine::Impl::step_contiguous(const std::string& version) {
  fit_memory();
  // Prefill every row without cache (new, or held across release_memory), packed in forwards of
  // at most max_prefill_tokens tokens.
  std::vector<int64_t> pending;
  for (size_t i = 0; i < running.size(); ++i)
    if (running[i]->cached == 0) pending.push_back(static_cast<int64_t>(i));
  for (size_t next = 0; next < pending.size();) {
    const auto start = Clock::now();
    std::vector<int64_t> rows;
    std::vector<std::vector<int64_t>> sequences;
    int64_t tokens = 0, longest = 0;
    for (; next < pending.size(); ++next) {
      auto sequence = running[pending[next]]->tokens();
      const int64_t size = static_cast<int64_t>(sequence.size());
      if (!rows.empty() && tokens + size > options.max_prefill_tokens) break;
      tokens += size;
      longest = std::max(longest, size);
      rows.push_back(pending[next]);
      sequences.push_back(std::move(sequence));
    }
    cache.reserve(static_cast<int64_t>(running.size()), longest);
    auto logits = prefill_forward(model, cache, sequences, rows);
    for (size_t k = 0; k < rows.size(); ++k)
      running[rows[k]]->cached = static_cast<int64_t>(sequences[k].size());
    sample_rows(logits, rows, version);
    std::lock_guard lock(mu);
    totals.prefill_tokens += tokens;
    totals.prefill_forwards += 1;
    totals.prefill_seconds += seconds_since(start);
  }
  compact();
  if (running.empty()) return;

  const auto start = Clock::now();
  std::vector<int64_t> tokens, positions, rows;
  int64_t longest = 0;
  for (size_t i = 0; i < running.size(); ++i) {
    tokens.push_back(running[i]->output_ids.back());
    positions.push_back(running[i]->cached);
    rows.push_back(static_cast<int64_t>(i));
    longest = std::max(longest, running[i]->cached + 1);
  }
  cache.reserve(static_cast<int64_t>(running.size()), longest);
  auto logits = decode_forward(model, cache, tokens, positions);
  for (auto& r : running) r->cached += 1;
  sample_rows(logits, rows, version);
  compact();
  std::lock_guard lock(mu);
  totals.decode_steps += 1;
  totals.decode_tokens += static_cast<int64_t>(rows.size());
  totals.decode_seconds += seconds_since(start);
}

std::vector<std::unique_ptr<EngineRequest>> NativeEngine::Impl::take_unscored() {
  std::vector<std::unique_ptr<EngineRequest>> out;
  for (auto it = queue.begin(); it != queue.end();) {
    if ((*it)->prompt_out && !(*it)->prompt_scored) {
      out.push_back(std::move(*it));
      it = queue.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void NativeEngine::Impl::score(std::vector<std::unique_ptr<EngineRequest>>& requests) {
  std::vector<PromptToScore> prompts;
  for (const auto& r : requests)
    prompts.push_back({&r->prompt, r->sampling.temperature, r->prompt_out});
  try {
    score_prompts(model, prompts, options.max_prefill_tokens);
    for (auto& r : requests) r->prompt_scored = true;
  } catch (...) {  // fails these requests, not the engine
    const auto error = std::current_exception();
    for (auto& r : requests) {
      r->promise.set_exception(error);
      r.reset();
    }
  }
}

NativeEngine::NativeEngine(Model& model, const Tokenizer* tokenizer, NativeEngineOptions options) {
  if (options.max_running_requests <= 0)
    throw UsageError("NativeEngine: max_running_requests must be positive");
  if (options.max_prefill_tokens <= 0)
    throw UsageError("NativeEngine: max_prefill_tokens must be positive");
  if (options.kv_block_size < 0 || options.kv_cache_blocks < 0 || options.max_kv_cache_bytes < 0)
    throw UsageError("NativeEngine: KV cache sizes must not be negative");
  const TensorParallel& tp = model.tensor_parallel();
  if (tp.is_parallel() && !options.paged_kv)
    throw UsageError("NativeEngine: tensor parallelism needs the paged KV cache");
  impl_ = std::make_unique<Impl>(model, tokenizer, std::move(options));
  if (impl_->max_context < 2)
    throw UsageError("NativeEngine: the context length must be at least 2 tokens");
  if (tp.is_parallel()) {
    auto channel = std::make_unique<TpPlanChannel>(*tp.group);
    if (tp.rank != 0) {
      impl_->tp_follower = std::make_unique<TpFollower>(
          model, std::move(impl_->paged), std::move(impl_->decode_runner), std::move(channel),
          impl_->options.attention_path);
      return;
    }
    impl_->tp_leader = std::move(channel);
  }
  impl_->thread = std::thread([this] { impl_->loop(); });
}

NativeEngine::~NativeEngine() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->tp_leader) {
    try {
      impl_->tp_leader->post({.op = TpStepPlan::Op::kStop});
    } catch (const std::exception&) {  // the store is gone: the followers stop on their own
    }
  }
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
  if (impl_->tp_follower)
    throw Error("generate: this engine follows tensor-parallel rank 0, which takes the requests");
  auto r = impl_->make_request(request);
  r->on_token = std::move(on_token);
  if (top) {
    if (top->count < 0)
      throw Error("generate: top log-probs per position must be >= 0, got " +
                  std::to_string(top->count));
    r->top_logprobs = std::min(top->count, impl_->model.config().vocab_size);
    r->top_out = top;
  }
  if (prompt) {
    if (impl_->model.tensor_parallel().is_parallel())
      throw Error("generate: prompt log-probs are not supported under tensor parallelism");
    if (prompt->count < 0)
      throw Error("generate: prompt log-prob alternatives per position must be >= 0, got " +
                  std::to_string(prompt->count));
    prompt->positions.clear();
    r->prompt_out = prompt;
  }
  auto result = r->promise.get_future();
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopping) throw Error("generate: the engine is shutting down");
    impl_->queue.push_back(std::move(r));
  }
  impl_->wake.notify_all();
  return result;
}

void NativeEngine::abort_all() {
  if (impl_->tp_follower) return;  // rank 0 holds the requests
  std::unique_lock lock(impl_->mu);
  for (auto& r : impl_->queue) impl_->finish(*r, "abort", impl_->weight_version);
  impl_->queue.clear();
  const uint64_t epoch = ++impl_->abort_epoch;
  impl_->wake.notify_all();
  impl_->changed.wait(lock, [&] { return impl_->aborted_epoch >= epoch || impl_->stopping; });
}

void NativeEngine::pause() {
  if (impl_->tp_follower) return impl_->tp_follower->pause();
  std::unique_lock lock(impl_->mu);
  impl_->paused = true;
  impl_->prefix_reset_pending = true;
  impl_->changed.wait(lock, [&] { return impl_->idle; });
  if (impl_->tp_leader)
    impl_->tp_leader->post({.op = TpStepPlan::Op::kPark, .epoch = ++impl_->tp_parks});
}

void NativeEngine::resume() {
  if (impl_->tp_follower) return impl_->tp_follower->resume();
  {
    std::lock_guard lock(impl_->mu);
    impl_->paused = false;
  }
  impl_->wake.notify_all();
}

void NativeEngine::release_memory() {
  if (impl_->tp_follower) return impl_->tp_follower->release_memory();
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
  s.queued = static_cast<int64_t>(impl_->queue.size());
  if (impl_->tp_follower) {
    s.kv_cache_bytes = impl_->tp_follower->kv_cache_bytes();
    s.decode_steps = impl_->tp_follower->steps();  // forwards run for rank 0's steps
    s.tp_plan_seconds = impl_->tp_follower->plan_wait_seconds();
    s.forward_seconds = impl_->tp_follower->forward_seconds();
  }
  return s;
}

}  // namespace vime::engine
