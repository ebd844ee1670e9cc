#include "vime/engine/scheduler.hpp"

#include <algorithm>
#include <utility>

#include "vime/error.hpp"

namespace vime::engine {

Scheduler::Scheduler(const NativeEngineOptions& options, const KvCacheBudget& budget)
    : max_running_(options.max_running_requests),
      max_tokens_(options.max_prefill_tokens),
      budget_(budget) {
  reset_blocks();
}

void Scheduler::add(std::unique_ptr<EngineRequest> request) {
  waiting_.push_back(std::move(request));
}

StepPlan Scheduler::schedule() {
  scheduled_.clear();
  copies_.clear();
  int64_t budget = max_tokens_;
  // Running requests first (decode rows, unfinished prefill chunks), then new ones; a step that
  // had to preempt admits none.
  if (!schedule_running(budget)) admit_waiting(budget);
  return make_plan();
}

bool Scheduler::schedule_running(int64_t& budget) {
  bool preempted = false;
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    EngineRequest& r = *running_[i];
    const int64_t tokens = std::min(r.length() - r.cached, budget);
    bool fits = try_schedule(r, tokens);
    while (!fits && running_.size() - 1 > i) {  // make room: the newest requests go back
      preempt_last();
      preempted = true;
      fits = try_schedule(r, tokens);
    }
    if (!fits) {  // r is the newest itself
      preempt_last();
      return true;
    }
    budget -= tokens;
  }
  return preempted;
}

void Scheduler::admit_waiting(int64_t& budget) {
  for (auto it = waiting_.begin(); it != waiting_.end() && budget > 0 &&
                                   static_cast<int64_t>(running_.size()) < max_running_;) {
    EngineRequest& r = **it;
    auto matched = blocks_->match_prefix(r.sequence, r.blocks);
    if (!matched) {  // its prefix is being computed in this step: next step shares it
      ++it;
      continue;
    }
    if (r.return_routed_experts && *matched > r.routed_rows()) {
      // Cached positions have no routing to return: the request recomputes its whole prefix
      // (the prefix cache is skipped for it; its blocks are published for the others).
      release_blocks(r);
      *matched = 0;
    }
    // At least the last token is computed: its logits give the next token.
    r.cached = std::min(*matched, r.length() - 1);
    const int64_t tokens = std::min(r.length() - r.cached, budget);
    if (!try_schedule(r, tokens)) {
      release_blocks(r);
      r.cached = 0;
      break;  // first come, first served: later requests wait too
    }
    if (!r.admitted) r.cached_tokens = r.cached;
    r.admitted = true;
    prefix_cached_tokens_ += r.cached;
    budget -= tokens;
    running_.push_back(std::move(*it));
    it = waiting_.erase(it);
  }
}

bool Scheduler::try_schedule(EngineRequest& r, int64_t tokens) {
  const int64_t begin = r.cached, end = r.cached + tokens;
  if (!blocks_->make_writable(r.blocks, begin, end, copies_)) return false;
  blocks_->publish_full(r.sequence, r.blocks, begin, end);
  scheduled_.push_back({&r, begin, end, end == r.length()});
  return true;
}

void Scheduler::preempt_last() {
  // Recompute preemption (vLLM's): the newest running request gives its blocks back and waits at
  // the front of the queue with its output so far; its prefill then finds what is still cached.
  auto r = std::move(running_.back());
  running_.pop_back();
  release_blocks(*r);
  r->cached = 0;
  ++preempted_;
  waiting_.push_front(std::move(r));
}

void Scheduler::release_blocks(EngineRequest& r) {
  blocks_->release(r.blocks);
  r.blocks.clear();
}

void Scheduler::reset_blocks() {
  // A configured size is allocated at once (as vLLM does); otherwise the pool doubles on demand.
  const int64_t initial =
      budget_.fixed ? budget_.max_blocks : std::min<int64_t>(64, budget_.max_blocks);
  blocks_ = std::make_unique<BlockManager>(budget_.block_size, budget_.max_blocks, initial);
}

StepPlan Scheduler::make_plan() const {
  StepPlan plan;
  plan.num_blocks = blocks_->num_blocks();
  for (const auto& c : copies_) plan.copies.emplace_back(c.from, c.to);
  for (const auto& s : scheduled_) {
    const EngineRequest& r = *s.request;
    plan.sequences.push_back({{r.sequence.begin() + s.begin, r.sequence.begin() + s.end},
                              s.begin,
                              s.end,
                              r.blocks,
                              s.sampled});
    plan.record_routing |= r.return_routed_experts;
    if (s.sampled)
      plan.samples.push_back(
          {&r.sampling, static_cast<int64_t>(r.output_ids.size()), r.top_logprobs});
    if (s.sampled && s.end - s.begin == 1 && !r.output_ids.empty())
      ++plan.decode_rows;
    else
      plan.prefill_tokens += s.end - s.begin;
  }
  return plan;
}

int64_t Scheduler::postprocess(const StepPlan& plan, SampledTokens& sampled,
                               const std::string& version, const StepRouting& routing) {
  if (plan.record_routing) keep_routing(routing);
  mark_computed();
  if (sampled.token_ids.size() != plan.samples.size())
    throw Error("engine: the sampler returned " + std::to_string(sampled.token_ids.size()) +
                " tokens for " + std::to_string(plan.samples.size()) + " sequences");
  int64_t finished = 0;
  size_t k = 0;
  for (const auto& s : scheduled_)
    if (s.sampled) finished += take_token(*s.request, sampled, k++, version);
  std::erase_if(running_, [](const auto& r) { return r->finished; });
  return finished;
}

void Scheduler::keep_routing(const StepRouting& routing) {
  const int64_t width = routing.width;
  if (width == 0) return;  // a dense model
  int64_t row = 0;
  for (const auto& s : scheduled_) {
    EngineRequest& r = *s.request;
    if (r.return_routed_experts) {
      r.routed_width = width;
      // Positions recomputed after a preemption keep the routing they were first run with.
      const int64_t from = std::max(s.begin, r.routed_rows());
      if (s.begin > r.routed_rows())
        throw Error("engine: routed experts of positions before " + std::to_string(s.begin) +
                    " were never recorded");
      if (static_cast<int64_t>(routing.ids.size()) < (row + s.end - s.begin) * width)
        throw Error("engine: the step's routed experts cover fewer positions than it ran");
      if (from < s.end) {
        const auto* first = routing.ids.data() + (row + from - s.begin) * width;
        r.routed_experts.insert(r.routed_experts.end(), first, first + (s.end - from) * width);
      }
    }
    row += s.end - s.begin;
  }
}

void Scheduler::mark_computed() {
  for (const auto& s : scheduled_) {
    EngineRequest& r = *s.request;
    blocks_->mark_computed(r.sequence, r.blocks, s.begin, s.end,
                           static_cast<int64_t>(r.prompt.size()));
    r.cached = s.end;
  }
}

// Whether the token ended the request (a stop, its length, or its callback's refusal).
bool Scheduler::take_token(EngineRequest& r, SampledTokens& sampled, size_t k,
                           const std::string& version) {
  const int32_t token = sampled.token_ids[k];
  const float log_prob = sampled.log_probs[k];
  r.output_ids.push_back(token);
  r.sequence.push_back(token);
  if (r.top_logprobs > 0) r.top.push_back(std::move(sampled.top[k]));
  r.log_probs.push_back(log_prob);
  const StopResult result = r.checker->on_token(token);
  const char* reason = result.done() ? finish_reason_name(result.reason) : nullptr;
  const bool wanted = !r.on_token || r.on_token(token, log_prob, reason);
  if (!reason && wanted) return false;
  release_blocks(r);
  r.finish(reason ? reason : "abort", version);
  return true;
}

void Scheduler::fail_running(std::exception_ptr error) {
  for (auto& r : running_) {
    if (r->finished) continue;
    release_blocks(*r);
    r->promise.set_exception(error);
  }
  running_.clear();
}

void Scheduler::preempt_all(int64_t most) {
  // Newest first, so the queue keeps the running order ahead of the requests that never ran.
  while (!running_.empty()) {
    if (running_.back()->finished)
      running_.pop_back();
    else
      preempt_last();
  }
  max_running_ = std::max<int64_t>(1, std::min(max_running_, most));
}

void Scheduler::abort_all(const std::string& version) {
  for (auto& r : running_) {
    if (r->finished) continue;
    release_blocks(*r);
    r->finish("abort", version);
  }
  running_.clear();
  for (auto& r : waiting_) r->finish("abort", version);
  waiting_.clear();
}

void Scheduler::release() {
  for (auto& r : running_) {
    r->cached = 0;
    r->blocks.clear();
  }
  reset_blocks();
}

void Scheduler::reset_prefix_cache() { blocks_->reset_prefix_cache(); }

SchedulerStats Scheduler::stats() const {
  return {.waiting = static_cast<int64_t>(waiting_.size()),
          .running = static_cast<int64_t>(running_.size()),
          .preempted = preempted_,
          .prefix_cached_tokens = prefix_cached_tokens_,
          .kv_blocks_total = blocks_->num_blocks(),
          .kv_blocks_used = blocks_->used_blocks(),
          .kv_block_copies = blocks_->copies_made()};
}

}  // namespace vime::engine
