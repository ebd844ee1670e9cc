#include "vime/dist/rank_device.hpp"

#include <ATen/Context.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "vime/error.hpp"

namespace vime::dist {

at::Device bind_rank_device(const RankEnv& env) {
  if (!at::hasCUDA()) return at::Device(at::kCPU);
  // Through c10's device-guard registry: no link against c10_cuda, so this builds on CPU too.
  const auto* cuda = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const int count = static_cast<int>(cuda->deviceCount());
  if (env.local_rank >= count) {
    throw UsageError("rank " + std::to_string(env.rank) + " is local rank " +
                     std::to_string(env.local_rank) + " but this node shows " +
                     std::to_string(count) +
                     " GPU(s): lower --actor-num-gpus-per-node (or torchrun's --nproc-per-node), "
                     "or check CUDA_VISIBLE_DEVICES");
  }
  const at::Device device(at::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
  cuda->setDevice(device);
  return device;
}

at::Device current_device() {
  if (!at::hasCUDA()) return at::Device(at::kCPU);
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getDevice();
}

}  // namespace vime::dist
