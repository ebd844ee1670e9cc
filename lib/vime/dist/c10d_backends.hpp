// The two c10d backends behind ProcessGroup: Gloo (CPU tensors) and NCCL (CUDA tensors). Each is
// compiled only where this LibTorch has it (Gloo: its headers; NCCL: a CUDA LibTorch and nccl.h);
// asking for a missing one throws vime::Error saying which build has it.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <memory>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "vime/dist/process_group.hpp"

namespace vime::dist {

std::unique_ptr<ProcessGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store,
                                              const RankEnv& env, const at::Device& device,
                                              std::chrono::milliseconds timeout);
std::unique_ptr<ProcessGroup> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store,
                                              const RankEnv& env, const at::Device& device,
                                              std::chrono::milliseconds timeout);

}  // namespace vime::dist
