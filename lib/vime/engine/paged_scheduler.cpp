// NativeEngine's paged-KV scheduler step: keep the running requests going (copy-on-write,
// preempting the newest when blocks run out), admit waiting ones within the token budget (chunked
// prefill), then one forward over decode rows and prefill chunks (CUDA graphs for decode-only
// steps).
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "vime/core/elapsed.hpp"
#include "vime/engine/native_engine_impl.hpp"
#include "vime/error.hpp"
#include "vime/model/cached_forward.hpp"

namespace vime::engine {

using Clock = std::chrono::steady_clock;

void NativeEngine::Impl::reset_blocks() {
  // A configured size is allocated at once (as vLLM does); otherwise the pool doubles on demand.
  const int64_t initial =
      budget.fixed ? budget.max_blocks : std::min<int64_t>(64, budget.max_blocks);
  blocks = std::make_unique<BlockManager>(budget.block_size, budget.max_blocks, initial);
}

void NativeEngine::Impl::release_blocks(EngineRequest& r) {
  if (blocks) blocks->release(r.blocks);
  r.blocks.clear();
}

void NativeEngine::Impl::preempt_last() {
  // Recompute preemption (vLLM's): the newest running request gives its blocks back and waits at
  // the front of the queue with its output so far; its prefill then finds what is still cached.
  auto r = std::move(running.back());
  running.pop_back();
  release_blocks(*r);
  r->cached = 0;
  std::lock_guard lock(mu);
  totals.preempted += 1;
  queue.push_front(std::move(r));
}

bool NativeEngine::Impl::schedule(EngineRequest& r, int64_t tokens,
                                  std::vector<Scheduled>& scheduled,
                                  std::vector<BlockCopy>& copies) {
  const int64_t begin = r.cached, end = r.cached + tokens;
  if (!blocks->make_writable(r.blocks, begin, end, copies)) return false;
  blocks->publish_full(r.sequence, r.blocks, begin, end);
  scheduled.push_back({&r, begin, end});
  return true;
}

bool NativeEngine::Impl::schedule_running(std::vector<Scheduled>& scheduled,
                                          std::vector<BlockCopy>& copies, int64_t& budget) {
  bool preempted = false;
  for (size_t i = 0; i < running.size() && budget > 0; ++i) {
    EngineRequest& r = *running[i];
    const int64_t tokens = std::min(r.length() - r.cached, budget);
    bool fits = schedule(r, tokens, scheduled, copies);
    while (!fits && running.size() - 1 > i) {  // make room: the newest requests go back
      preempt_last();
      preempted = true;
      fits = schedule(r, tokens, scheduled, copies);
    }
    if (!fits) {  // r is the newest itself
      preempt_last();
      return true;
    }
    budget -= tokens;
  }
  return preempted;
}

void NativeEngine::Impl::admit_waiting(std::vector<Scheduled>& scheduled,
                                       std::vector<BlockCopy>& copies, int64_t& budget) {
  std::lock_guard lock(mu);
  for (auto it = queue.begin();
       it != queue.end() && budget > 0 &&
       static_cast<int64_t>(running.size()) < options.max_running_requests;) {
    EngineRequest& r = **it;
    const auto matched = blocks->match_prefix(r.sequence, r.blocks);
    if (!matched) {  // its prefix is being computed in this step: next step shares it
      ++it;
      continue;
    }
    // At least the last token is computed: its logits give the next token.
    r.cached = std::min(*matched, r.length() - 1);
    const int64_t tokens = std::min(r.length() - r.cached, budget);
    if (!schedule(r, tokens, scheduled, copies)) {
      release_blocks(r);
      r.cached = 0;
      break;  // first come, first served: later requests wait too
    }
    if (!r.admitted) r.cached_tokens = r.cached;
    r.admitted = true;
    totals.prefix_cached_tokens += r.cached;
    budget -= tokens;
    running.push_back(std::move(*it));
    it = queue.erase(it);
  }
}

void NativeEngine::Impl::drop_finished() {
  running.erase(std::remove(running.begin(), running.end(), nullptr), running.end());
}

void NativeEngine::Impl::step_paged(const std::string& version) {
  const auto start = Clock::now();
  std::vector<Scheduled> scheduled;
  std::vector<BlockCopy> copies;
  int64_t budget = options.max_prefill_tokens;
  // Running requests first (decode rows, unfinished prefill chunks), then new ones; a step that
  // had to preempt admits none.
  if (!schedule_running(scheduled, copies, budget)) admit_waiting(scheduled, copies, budget);
  if (scheduled.empty()) return;

  paged->resize(blocks->num_blocks());
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const auto& c : copies) pairs.emplace_back(c.from, c.to);
  paged->copy_blocks(pairs);
  std::vector<PagedSequence> batch;
  int64_t prefill_tokens = 0, decode_rows = 0;
  for (const auto& s : scheduled) {
    const EngineRequest& r = *s.request;
    const bool last = s.end == r.length();
    batch.push_back({r.sequence, s.begin, s.end, &r.blocks, last});
    if (last && s.end - s.begin == 1 && !r.output_ids.empty())
      ++decode_rows;
    else
      prefill_tokens += s.end - s.begin;
  }
  // Decode-only steps take the fixed-shape path where its buffers hold them.
  std::vector<DecodeRow> decode;
  if (prefill_tokens == 0 && decode_runner) {
    for (const auto& s : scheduled)
      decode.push_back({s.request->sequence[s.begin], s.begin, s.request->blocks});
    if (!decode_runner->accepts(decode)) decode.clear();
  }
  const bool capture = !decode.empty() && decode_runner->will_capture(decode.size());
  const auto posting = Clock::now();
  if (tp_leader)
    tp_leader->post(TpStepPlan::step(batch, pairs, blocks->num_blocks(), !decode.empty(), capture));
  const auto forward = Clock::now();
  auto logits = !decode.empty() ? decode_runner->run(decode, capture)
                                : paged_forward(model, *paged, batch, options.attention_path);
  if (tp_leader) tp_leader->tidy();  // while the device runs the step
  std::vector<int64_t> rows;
  for (const auto& s : scheduled) {
    EngineRequest& r = *s.request;
    blocks->mark_computed(r.sequence, r.blocks, s.begin, s.end,
                          static_cast<int64_t>(r.prompt.size()));
    r.cached = s.end;
  }
  for (size_t i = 0; i < running.size(); ++i)
    if (running[i]->cached == running[i]->length()) rows.push_back(static_cast<int64_t>(i));
  const auto sampling = Clock::now();
  sample_rows(logits, rows, version);
  const auto sampled = Clock::now();
  drop_finished();
  std::lock_guard lock(mu);
  using Seconds = std::chrono::duration<double>;
  totals.tp_plan_seconds += Seconds(forward - posting).count();
  totals.forward_seconds += Seconds(sampling - forward).count();
  totals.sample_seconds += Seconds(sampled - sampling).count();
  const double seconds = seconds_since(start);
  if (prefill_tokens > 0) {
    totals.prefill_tokens += prefill_tokens;
    totals.prefill_forwards += 1;
    totals.prefill_seconds += seconds;
  } else {
    totals.decode_steps += 1;
    totals.decode_tokens += decode_rows;
    totals.decode_seconds += seconds;
  }
}

}  // namespace vime::engine
