// One NCCL communicator over raw libnccl (nccl_library.hpp) on one CUDA device, with work on the
// device's default stream (the stream ATen runs on), waits that poll instead of blocking (so a dead
// peer or a failed HTTP call ends in ncclCommAbort and a vime::Error, not a hang), and the
// warm-up all-reduce vLLM's PyNcclCommunicator runs right after init.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "vime/weight_sync/nccl_library.hpp"

namespace vime::weight_sync {

// Polled while waiting: a non-empty answer ("update_weights on http://...: HTTP 500 ...") aborts
// the wait with that reason.
using FailureCheck = std::function<std::string()>;

// Why this process has no CUDA device, for errors: at::hasCUDA() is false both for a LibTorch
// without CUDA and for a CUDA_VISIBLE_DEVICES that names no GPU of the host.
std::string no_cuda_reason();

class NcclCommunicator {
 public:
  // Joins the communicator (ncclCommInitRank: returns once all `world` ranks did), then runs the
  // warm-up all-reduce. Throws vime::Error when `device` is not CUDA, NCCL is missing, a peer
  // fails, `failure` reports one, or `timeout_s` (> 0) passes.
  static std::unique_ptr<NcclCommunicator> create(const NcclUniqueId& id, int world, int rank,
                                                  const at::Device& device, double timeout_s,
                                                  const FailureCheck& failure = {});
  // A fresh id from ncclGetUniqueId (the root's job). Throws vime::Error without NCCL.
  static NcclUniqueId new_unique_id();
  ~NcclCommunicator();  // aborts the communicator (ncclCommDestroy would wait for the peers)
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  const at::Device& device() const { return device_; }
  bool aborted() const { return comm_ == nullptr; }

  // Enqueues a broadcast from `root` of a contiguous CUDA tensor on this device (sent from it on
  // the root, received into it elsewhere). NCCL type from the dtype; `as_bytes` sends it as uint8.
  void broadcast(const at::Tensor& tensor, int root, bool as_bytes = false);
  // Waits for everything enqueued; on timeout, a NCCL async error or a `failure`, aborts the
  // communicator and throws vime::Error starting with `what`.
  void wait(const std::string& what, double timeout_s, const FailureCheck& failure = {});
  void abort();

 private:
  NcclCommunicator(NcclComm comm, int world, int rank, const at::Device& device);
  void check_alive(const std::string& what) const;

  const NcclLibrary& nccl_;
  NcclComm comm_;
  int world_, rank_;
  at::Device device_;
};

// torch dtype <-> the names vLLM's update_info uses ("bfloat16", getattr(torch, name)).
std::string dtype_name(at::ScalarType type);
at::ScalarType scalar_type_from_name(std::string_view name);

}  // namespace vime::weight_sync
