#include "vime/loop/rank_channel.hpp"

#include <chrono>
#include <cstring>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "vime/core/byte_codec.hpp"
#include "vime/error.hpp"

namespace vime::loop {
namespace {

constexpr char kMagic[] = "VIMEORD1";

using Writer = core::ByteWriter;

std::string order_key(int64_t rollout_id) { return "vime/order/" + std::to_string(rollout_id); }

}  // namespace

std::string encode_order(const RolloutOrder& order) {
  Writer w;
  for (const char* c = kMagic; *c; ++c) w.put<char>(*c);
  w.put<int64_t>(order.rollout_id);
  w.put<uint8_t>(order.train);
  w.put<uint8_t>(order.save);
  const auto& b = order.batch;
  w.put<uint64_t>(b.size());
  w.put<uint8_t>(!b.rollout_log_probs.empty());
  for (size_t i = 0; i < b.size(); ++i) {
    w.put_vector(b.tokens[i]);
    w.put<int64_t>(b.response_lengths[i]);
    w.put_vector(i < b.loss_masks.size() ? b.loss_masks[i] : std::vector<float>{});
    w.put<double>(b.rewards[i]);
    if (!b.rollout_log_probs.empty()) w.put_vector(b.rollout_log_probs[i]);
    w.put<int64_t>(i < b.rollout_ids.size() ? b.rollout_ids[i] : static_cast<int64_t>(i));
  }
  return w.take();
}

RolloutOrder decode_order(const std::string& bytes) {
  core::ByteReader r(bytes, "rank channel: a rollout message");
  for (const char* c = kMagic; *c; ++c)
    if (r.get<char>() != *c) r.fail();
  RolloutOrder order;
  order.rollout_id = r.get<int64_t>();
  order.train = r.get<uint8_t>() != 0;
  order.save = r.get<uint8_t>() != 0;
  const auto n = r.get<uint64_t>();
  const bool has_log_probs = r.get<uint8_t>() != 0;
  auto& b = order.batch;
  for (uint64_t i = 0; i < n; ++i) {
    b.tokens.push_back(r.get_vector<int64_t>());
    b.response_lengths.push_back(r.get<int64_t>());
    b.loss_masks.push_back(r.get_vector<float>());
    b.rewards.push_back(r.get<double>());
    if (has_log_probs) b.rollout_log_probs.push_back(r.get_vector<float>());
    b.rollout_ids.push_back(r.get<int64_t>());
  }
  if (!r.at_end()) r.fail();
  return order;
}

void RankChannel::publish_range(const RunRange& range) {
  Writer w;
  w.put<int64_t>(range.start_rollout_id);
  w.put<int64_t>(range.num_rollout);
  const auto bytes = w.take();
  group_.store().set("vime/range", std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

void RankChannel::publish(const RolloutOrder& order) {
  // Every rank read the previous order before the training collectives that followed it.
  if (last_key_) group_.store().deleteKey(*last_key_);
  const auto bytes = encode_order(order);
  last_key_ = order_key(order.rollout_id);
  group_.store().set(*last_key_, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

std::string RankChannel::wait_and_get(const std::string& key) {
  auto& store = group_.store();
  // A rollout may take longer than any store timeout: poll; a lost rank 0 (its store gone)
  // throws from check(). Not a long wait(): the store's client serves one call at a time, and
  // this rank's tensor-parallel engine reads and posts its step plans through it meanwhile.
  while (true) {
    try {
      if (store.check({key})) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } catch (const std::exception& e) {
      const std::string what = e.what();
      // Rank 0's own failure is the cause: let its exit reach the launcher first, so the job's
      // one line names it rather than this consequence.
      std::this_thread::sleep_for(std::chrono::seconds(3));
      throw Error("rank " + std::to_string(group_.rank()) +
                  ": lost the controller (rank 0) while waiting for " + key + ": " +
                  what.substr(0, what.find('\n')));
    }
  }
  const auto value = store.get(key);
  return std::string(value.begin(), value.end());
}

void RankChannel::finish() {
  auto& store = group_.store();
  store.set("vime/done", std::vector<uint8_t>{1});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (store.add("vime/left", 0) < group_.size() - 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void RankChannel::wait_finish() {
  wait_and_get("vime/done");
  group_.store().add("vime/left", 1);
}

RunRange RankChannel::receive_range() {
  const auto bytes = wait_and_get("vime/range");
  core::ByteReader r(bytes, "rank channel: a rollout message");
  RunRange range;
  range.start_rollout_id = r.get<int64_t>();
  range.num_rollout = r.get<int64_t>();
  return range;
}

RolloutOrder RankChannel::receive(int64_t rollout_id) {
  auto order = decode_order(wait_and_get(order_key(rollout_id)));
  if (order.rollout_id != rollout_id) {
    throw Error("rank channel: expected rollout " + std::to_string(rollout_id) + ", got " +
                std::to_string(order.rollout_id));
  }
  return order;
}

}  // namespace vime::loop
