// The trainer ranks' communicator: a c10d TCPStore rendezvous and a c10d process group
// (ProcessGroupNCCL on CUDA, ProcessGroupGloo on CPU), the engine torchrun and Megatron use.
// Every call is a collective: all ranks of the group make the same calls in the same order.
// Tensors stay on their device; byte payloads travel as uint8 tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vime/dist/rank_env.hpp"

namespace c10d {
class Store;
}

namespace vime::dist {

enum class ReduceOp { kSum, kMax, kMin };

class ProcessGroup {
 public:
  // Rendezvous through a TCPStore hosted by rank 0 at env.master_addr:master_port; waits at most
  // `timeout` for every rank, then throws vime::Error naming the address and the ranks that did
  // not arrive. The backend: NCCL when `device` is CUDA, Gloo otherwise. `timeout` is also the
  // collectives' timeout (--distributed-timeout-minutes).
  static std::unique_ptr<ProcessGroup> create(const RankEnv& env, const at::Device& device,
                                              std::chrono::milliseconds timeout);
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const at::Device& device() const = 0;
  virtual c10d::Store& store() = 0;

  // In place, blocking.
  virtual void all_reduce(std::vector<at::Tensor>& tensors, ReduceOp op = ReduceOp::kSum) = 0;
  virtual void broadcast(std::vector<at::Tensor>& tensors, int root) = 0;
  // output[r] receives rank r's `input` (same shape and dtype on every rank).
  virtual void all_gather(std::vector<at::Tensor>& output, const at::Tensor& input) = 0;
  // `output` (numel = input.numel() / size()) receives the sum over ranks of this rank's slice
  // of `input` (a flat tensor whose numel divides by size()).
  virtual void reduce_scatter(at::Tensor& output, const at::Tensor& input) = 0;
  // Variable all-to-all over flat tensors (one dtype on every rank): input's elements
  // [Σ input_splits[<r], + input_splits[r]) go to rank r, and output (numel = Σ output_splits)
  // receives rank r's part for this rank at [Σ output_splits[<r], ...). Each rank's
  // output_splits[r] equals rank r's input_splits[this rank].
  virtual void all_to_all(at::Tensor& output, const at::Tensor& input,
                          const std::vector<int64_t>& output_splits,
                          const std::vector<int64_t>& input_splits) = 0;
  virtual void barrier() = 0;

  // A group of some of this group's ranks (`ranks`: ascending ranks of this group, this rank among
  // them), on the same backend, store (its keys under `name`) and timeout. Only the members call
  // it, all with the same arguments; rank() of the new group is the index in `ranks`.
  virtual std::unique_ptr<ProcessGroup> new_group(const std::vector<int>& ranks,
                                                  const std::string& name);

  // Convenience collectives over host values.
  double all_reduce_sum(double value);
  std::string broadcast_bytes(const std::string& payload, int root);      // root's payload to all
  std::vector<std::string> all_gather_bytes(const std::string& payload);  // every rank's, by rank
};

}  // namespace vime::dist
