#include "vime/engine/tp_plan_channel.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "vime/core/torch_compat.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/error.hpp"

namespace vime::engine {
namespace {

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

TpPlanChannel::TpPlanChannel(dist::ProcessGroup& tp_group)
    : group_(tp_group), prefix_("vime/tp_engine/" + next_instance(tp_group) + "/") {}

std::string TpPlanChannel::key(int64_t n) const { return prefix_ + std::to_string(n); }

void TpPlanChannel::post(const StepPlan& plan) {
  std::lock_guard lock(mu_);
  if (plan.op == StepPlan::Op::kStep) {
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

std::optional<StepPlan> TpPlanChannel::next(const std::function<bool()>& stop) {
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
  return StepPlan::decode(std::string(value.begin(), value.end()));
}

}  // namespace vime::engine
