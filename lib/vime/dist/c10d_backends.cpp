#include "vime/dist/c10d_backends.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "vime/core/torch_compat.hpp"
#include "vime/error.hpp"

#if __has_include(<gloo/algorithm.h>)
#define VIME_HAS_GLOO 1
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#else
#define VIME_HAS_GLOO 0
#endif

// PyTorch's CMake config defines USE_C10D_NCCL for a CUDA LibTorch built with NCCL.
#if defined(USE_C10D_NCCL) && __has_include(<nccl.h>)
#define VIME_HAS_C10D_NCCL 1
#include <c10/cuda/CUDAGuard.h>

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace vime::dist {
namespace {

// A collective's Work, waited for: the current stream waits for it (NCCL), or the host (Gloo).
// Run on the current stream (compat::run_on_current_stream), torch 2.11's ProcessGroupNCCL
// returns no Work at all: the stream order is the wait.
void finish(const c10::intrusive_ptr<c10d::Work>& work) {
  if (work) work->wait();
}

// One implementation over either backend class: their collective calls have the same shape in
// LibTorch 1.13 (ProcessGroup subclasses) and 2.x (Backend subclasses).
template <class Backend>
class C10dGroup final : public ProcessGroup {
 public:
  C10dGroup(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<Backend> backend,
            const RankEnv& env, at::Device device, std::chrono::milliseconds timeout,
            bool has_reduce_scatter)
      : store_(std::move(store)),
        backend_(std::move(backend)),
        env_(env),
        rank_(env.rank),
        size_(env.world_size),
        device_(device),
        timeout_(timeout),
        has_reduce_scatter_(has_reduce_scatter) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const at::Device& device() const override { return device_; }
  c10d::Store& store() override { return *store_; }

  void all_reduce(std::vector<at::Tensor>& tensors, ReduceOp op) override {
    if (tensors.empty()) return;
    c10d::AllreduceOptions options;
    options.reduceOp = op == ReduceOp::kSum   ? c10d::ReduceOp::SUM
                       : op == ReduceOp::kMax ? c10d::ReduceOp::MAX
                                              : c10d::ReduceOp::MIN;
    compat::run_on_current_stream(options);
    finish(backend_->allreduce(tensors, options));
  }

  void broadcast(std::vector<at::Tensor>& tensors, int root) override {
    if (tensors.empty()) return;
    c10d::BroadcastOptions options;
    options.rootRank = root;
    compat::run_on_current_stream(options);
    finish(backend_->broadcast(tensors, options));
  }

  void all_gather(std::vector<at::Tensor>& output, const at::Tensor& input) override {
    std::vector<std::vector<at::Tensor>> out{output};
    std::vector<at::Tensor> in{input};
    c10d::AllgatherOptions options;
    compat::run_on_current_stream(options);
    finish(backend_->allgather(out, in, options));
    for (size_t r = 0; r < output.size(); ++r) {
      if (out[0][r].data_ptr() != output[r].data_ptr()) output[r].copy_(out[0][r]);
    }
  }

  void reduce_scatter(at::Tensor& output, const at::Tensor& input) override {
    if (input.numel() != output.numel() * size_) {
      throw Error("reduce_scatter: input has " + std::to_string(input.numel()) +
                  " elements, not output's " + std::to_string(output.numel()) + " x " +
                  std::to_string(size_) + " ranks");
    }
    if (has_reduce_scatter_) {
      at::Tensor in = input.contiguous();
      c10d::ReduceScatterOptions options;
      compat::run_on_current_stream(options);
      finish(backend_->_reduce_scatter_base(output, in, options));
      return;
    }
    // Gloo has no reduce-scatter: all-reduce a copy and keep this rank's slice.
    std::vector<at::Tensor> t{input.contiguous().clone()};
    all_reduce(t, ReduceOp::kSum);
    output.copy_(t[0].view(-1).narrow(0, rank_ * output.numel(), output.numel()).view_as(output));
  }

  void all_to_all(at::Tensor& output, const at::Tensor& input,
                  const std::vector<int64_t>& output_splits,
                  const std::vector<int64_t>& input_splits) override {
    if (static_cast<int>(output_splits.size()) != size_ ||
        static_cast<int>(input_splits.size()) != size_) {
      throw Error("all_to_all: " + std::to_string(input_splits.size()) + " input and " +
                  std::to_string(output_splits.size()) + " output splits for " +
                  std::to_string(size_) + " ranks");
    }
    at::Tensor in = input.contiguous().view(-1);
    std::vector<int64_t> out_splits = output_splits, in_splits = input_splits;
    c10d::AllToAllOptions options;
    compat::run_on_current_stream(options);
    finish(backend_->alltoall_base(output, in, out_splits, in_splits, options));
  }

  std::unique_ptr<ProcessGroup> new_group(const std::vector<int>& ranks,
                                          const std::string& name) override {
    const auto it = std::find(ranks.begin(), ranks.end(), rank_);
    if (it == ranks.end() || !std::is_sorted(ranks.begin(), ranks.end()) || ranks.front() < 0 ||
        ranks.back() >= size_) {
      throw Error("process group \"" + name + "\": rank " + std::to_string(rank_) +
                  " asked for a group of ranks it is not in (or out of range)");
    }
    RankEnv sub = env_;
    sub.rank = static_cast<int>(it - ranks.begin());
    sub.world_size = static_cast<int>(ranks.size());
    auto store = c10::make_intrusive<c10d::PrefixStore>("vime/group/" + name, store_);
    if (has_reduce_scatter_) return make_nccl_group(store, sub, device_, timeout_);
    return make_gloo_group(store, sub, device_, timeout_);
  }

  void barrier() override {
    std::vector<at::Tensor> t{at::zeros({1}, at::TensorOptions().device(device_))};
    all_reduce(t, ReduceOp::kSum);
    if (device_.is_cuda()) (void)t[0].item<float>();  // wait for the device too
  }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<Backend> backend_;
  RankEnv env_;
  int rank_, size_;
  at::Device device_;
  std::chrono::milliseconds timeout_;
  bool has_reduce_scatter_;
};

bool is_loopback(const std::string& address) {
  return address == "127.0.0.1" || address == "localhost" || address == "::1";
}

}  // namespace

std::unique_ptr<ProcessGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store,
                                              const RankEnv& env, const at::Device& device,
                                              std::chrono::milliseconds timeout) {
#if VIME_HAS_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // GLOO_SOCKET_IFNAME as torch.distributed reads it; a job on one host stays on the loopback.
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else if (is_loopback(env.master_addr)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  options->threads = 2;
  auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
  return std::make_unique<C10dGroup<c10d::ProcessGroupGloo>>(store, gloo, env, device, timeout,
                                                             false);
#else
  (void)store, (void)env, (void)device, (void)timeout;
  throw Error(
      "distributed training on CPU needs Gloo, and this LibTorch build was compiled without its "
      "headers (gloo/algorithm.h); install the gloo headers (Debian: libgloo-dev) and rebuild");
#endif
}

std::unique_ptr<ProcessGroup> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store,
                                              const RankEnv& env, const at::Device& device,
                                              std::chrono::milliseconds timeout) {
#if defined(VIME_HAS_C10D_NCCL)
  c10::cuda::CUDAGuard guard(device);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
  return std::make_unique<C10dGroup<c10d::ProcessGroupNCCL>>(store, nccl, env, device, timeout,
                                                             true);
#else
  (void)store, (void)env, (void)device, (void)timeout;
  throw Error(
      "distributed training on CUDA needs c10d's ProcessGroupNCCL: build vime against a CUDA "
      "LibTorch with nccl.h on the include path (see docs/development.md)");
#endif
}

}  // namespace vime::dist
