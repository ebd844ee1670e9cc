// The embedded engine under tensor parallelism: every rank of a tensor-parallel group runs the
// forward of its own shards (the trainer's tensors) against its own KV cache of its KV heads, in
// lockstep. TP rank 0 schedules (admission, block allocation, preemption, sampling) and posts each
// step's plan; ranks 1..n-1 run exactly the forwards it describes. Plans travel through the group's
// c10d store rather than a collective, so a follower waiting for the next step never holds a
// collective open on the group the trainer uses between rollouts.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vime {
struct PagedSequence;
}
namespace vime::dist {
class ProcessGroup;
}

namespace vime::engine {

struct TpStepPlan {
  enum class Op : int32_t {
    kStep = 0,     // one forward over `sequences`
    kPark = 1,     // the leader paused (epoch: its count of pauses)
    kRelease = 2,  // the leader freed its KV cache (epoch: its count of releases)
    kStop = 3,     // the leader's engine is gone
  };
  struct Sequence {
    std::vector<int32_t> tokens;  // positions [begin, end)
    int64_t begin = 0, end = 0;
    std::vector<int32_t> block_table;
    bool wants_logits = false;
  };
  Op op = Op::kStep;
  int64_t epoch = 0;
  int64_t num_blocks = 0;  // the cache's size for this step
  // A decode-only step through the fixed-shape runner (engine/decode_graph.hpp) rather than
  // paged_forward, and whether rank 0 captures its CUDA graph in it (every rank must).
  bool fixed_shape_decode = false;
  bool capture_graph = false;
  std::vector<std::pair<int32_t, int32_t>> copies;  // copy-on-write blocks, before the forward
  std::vector<Sequence> sequences;

  // The plan of one paged forward (copies applied and the cache at num_blocks first).
  static TpStepPlan step(const std::vector<PagedSequence>& batch,
                         std::vector<std::pair<int32_t, int32_t>> copies, int64_t num_blocks,
                         bool fixed_shape_decode = false, bool capture_graph = false);
  std::string encode() const;
  // Throws vime::Error on a truncated or malformed payload.
  static TpStepPlan decode(const std::string& bytes);
};

// Plan n of a group's engine under store key "vime/tp_engine/<instance>/<n>" (instance: the how
// many-th engine this process made over the group, the same on every rank).
class TpPlanChannel {
 public:
  explicit TpPlanChannel(dist::ProcessGroup& tp_group);
  // Leader. Thread-safe; plans are numbered in the order posted. One store round trip.
  void post(const TpStepPlan& plan);
  // Leader: deletes the plans every follower has read (a round trip each), off the step's
  // critical path (while the device runs the step).
  void tidy();
  // Follower: the next plan, waiting in slices; nullopt once `stop()` says so between slices.
  std::optional<TpStepPlan> next(const std::function<bool()>& stop);

 private:
  std::string key(int64_t n) const;
  dist::ProcessGroup& group_;
  std::string prefix_;
  std::mutex mu_;
  int64_t posted_ = 0, read_ = 0;
  int64_t last_step_ = -1, read_by_all_ = 0, deleted_ = 0;
};

}  // namespace vime::engine
