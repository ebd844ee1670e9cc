#include "vime/engine/tp_step_plan.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "vime/core/byte_codec.hpp"
#include "vime/core/torch_compat.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"
#include "vime/model/cached_forward.hpp"

namespace vime::engine {
namespace {

using Writer = core::ByteWriter;

bool is_timeout(const std::exception& e) {
  const std::string what = e.what();
  return what.find("imeout") != std::string::npos || what.find("timed out") != std::string::npos;
}

// The how many-th engine this process made over each group: the same count on every rank, since
// the ranks of a group make their engines together.
std::string next_instance(dist::ProcessGroup& group) {
  static std::mutex mu;
  static std::map<const void*, int64_t> made;
  std::lock_guard lock(mu);
  return std::to_string(made[&group.store()]++);
}

}  // namespace

TpStepPlan TpStepPlan::step(const std::vector<PagedSequence>& batch,
                            std::vector<std::pair<int32_t, int32_t>> copies, int64_t num_blocks,
                            bool fixed_shape_decode, bool capture_graph) {
  TpStepPlan plan;
  plan.num_blocks = num_blocks;
  plan.fixed_shape_decode = fixed_shape_decode;
  plan.capture_graph = capture_graph;
  plan.copies = std::move(copies);
  for (const auto& b : batch) {
    Sequence s;
    s.tokens.assign(b.tokens.begin() + (b.begin - b.tokens_offset),
                    b.tokens.begin() + (b.end - b.tokens_offset));
    s.begin = b.begin;
    s.end = b.end;
    s.block_table = *b.block_table;
    s.wants_logits = b.wants_logits;
    plan.sequences.push_back(std::move(s));
  }
  return plan;
}

std::string TpStepPlan::encode() const {
  Writer w;
  w.put<int32_t>(static_cast<int32_t>(op));
  w.put<int64_t>(epoch);
  w.put<int64_t>(num_blocks);
  w.put<uint8_t>((fixed_shape_decode ? 1 : 0) | (capture_graph ? 2 : 0));
  std::vector<int32_t> flat;
  for (const auto& [from, to] : copies) flat.insert(flat.end(), {from, to});
  w.put_vector(flat);
  w.put<uint64_t>(sequences.size());
  for (const auto& s : sequences) {
    w.put_vector(s.tokens);
    w.put<int64_t>(s.begin);
    w.put<int64_t>(s.end);
    w.put_vector(s.block_table);
    w.put<uint8_t>(s.wants_logits ? 1 : 0);
  }
  return w.take();
}

TpStepPlan TpStepPlan::decode(const std::string& bytes) {
  core::ByteReader r(bytes, "tensor-parallel engine: a step plan");
  TpStepPlan plan;
  const auto op = r.get<int32_t>();
  if (op < 0 || op > static_cast<int32_t>(Op::kStop)) r.fail();
  plan.op = static_cast<Op>(op);
  plan.epoch = r.get<int64_t>();
  plan.num_blocks = r.get<int64_t>();
  const auto flags = r.get<uint8_t>();
  if (flags > 3) r.fail();
  plan.fixed_shape_decode = (flags & 1) != 0;
  plan.capture_graph = (flags & 2) != 0;
  const auto flat = r.get_vector<int32_t>();
  if (flat.size() % 2 != 0) r.fail();
  for (size_t i = 0; i < flat.size(); i += 2) plan.copies.emplace_back(flat[i], flat[i + 1]);
  const auto n = r.get<uint64_t>();
  if (n > bytes.size()) r.fail();
  for (uint64_t i = 0; i < n; ++i) {
    Sequence s;
    s.tokens = r.get_vector<int32_t>();
    s.begin = r.get<int64_t>();
    s.end = r.get<int64_t>();
    s.block_table = r.get_vector<int32_t>();
    s.wants_logits = r.get<uint8_t>() != 0;
    if (s.begin < 0 || s.end < s.begin || static_cast<int64_t>(s.tokens.size()) != s.end - s.begin)
      r.fail();
    plan.sequences.push_back(std::move(s));
  }
  if (!r.at_end()) r.fail();
  return plan;
}

TpPlanChannel::TpPlanChannel(dist::ProcessGroup& tp_group)
    : group_(tp_group), prefix_("vime/tp_engine/" + next_instance(tp_group) + "/") {}

std::string TpPlanChannel::key(int64_t n) const { return prefix_ + std::to_string(n); }

void TpPlanChannel::post(const TpStepPlan& plan) {
  std::lock_guard lock(mu_);
  if (plan.op == TpStepPlan::Op::kStep) {
    // Every follower ran the previous step's forward with this rank (its collectives), so it read
    // every plan before that one.
    if (last_step_ >= 0) read_by_all_ = last_step_;
    last_step_ = posted_;
  }
  const auto bytes = plan.encode();
  group_.store().set(key(posted_++), std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

void TpPlanChannel::tidy() {
  std::lock_guard lock(mu_);
  for (; deleted_ < read_by_all_; ++deleted_) group_.store().deleteKey(key(deleted_));
}

std::optional<TpStepPlan> TpPlanChannel::next(const std::function<bool()>& stop) {
  auto& store = group_.store();
  const auto k = key(read_);
  // Bounded waits, so that stop() is seen; the store's client is shared with this rank's other
  // threads (torch_compat.hpp says why 1.13 polls).
  auto arrived = [&] {
    if constexpr (compat::kStoreWaitTimeoutIsSafe) {
      store.wait({k}, std::chrono::milliseconds(500));
      return true;
    } else {
      if (store.check({k})) return true;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return false;
    }
  };
  while (true) {
    if (stop()) return std::nullopt;
    try {
      if (arrived()) break;
    } catch (const std::exception& e) {
      if (!is_timeout(e))
        throw Error("tensor-parallel engine rank " + std::to_string(group_.rank()) +
                    ": lost TP rank 0 while waiting for its next step: " +
                    std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
    }
  }
  const auto value = store.get(k);
  ++read_;
  return TpStepPlan::decode(std::string(value.begin(), value.end()));
}

}  // namespace vime::engine
