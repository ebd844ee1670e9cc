#include "vime/weight_sync/device_weight_copy.hpp"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <chrono>

#include "vime/error.hpp"
#include "vime/weight_sync/packed_broadcast.hpp"
#include "vime/weight_sync/transfer_protocol.hpp"

namespace vime::weight_sync {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

at::Tensor bytes_of(const at::Tensor& t) { return t.view({-1}).view(at::kByte); }

void check_match(const NamedTensors& src, const NamedTensors& dst) {
  if (src.size() != dst.size()) {
    throw Error("weight copy: the trainer has " + std::to_string(src.size()) +
                " parameters, the engine replica " + std::to_string(dst.size()));
  }
  for (size_t i = 0; i < src.size(); ++i) {
    const auto& [name, s] = src[i];
    const auto& d = dst[i].second;
    if (dst[i].first != name || s.sizes() != d.sizes() || s.scalar_type() != d.scalar_type() ||
        !d.is_contiguous()) {
      throw Error("weight copy: trainer tensor " + name + " does not match the replica's " +
                  dst[i].first + " (name, shape, dtype or layout)");
    }
  }
}

std::vector<TensorMeta> metas(const NamedTensors& tensors) {
  std::vector<TensorMeta> out;
  for (const auto& [name, t] : tensors) {
    TensorMeta m;
    m.name = name;
    m.dtype_name = "uint8";  // only nbytes() matters for the plan
    m.shape = {t.numel() * static_cast<int64_t>(t.element_size())};
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

void synchronize_device(const at::Device& device) {
  if (device.is_cpu()) return;
  // The current stream (the one vime queues on): synchronizeStream is on LibTorch 1.13 and 2.x
  // alike (synchronizeDevice is 2.x only).
  c10::DeviceGuard guard(device);
  auto* impl = c10::impl::getDeviceGuardImpl(device.type());
  impl->synchronizeStream(impl->getStream(device));
}

DeviceCopyStats copy_weights_packed(const NamedTensors& src, const NamedTensors& dst,
                                    int64_t bucket_bytes) {
  check_match(src, dst);
  DeviceCopyStats stats;
  if (src.empty()) return stats;
  const double start = now_s();
  const auto src_device = src.front().second.device();
  const auto dst_device = dst.front().second.device();
  for (const auto& chunk : plan_packed_chunks(metas(src), std::max<int64_t>(bucket_bytes, 1))) {
    at::Tensor packed;
    {
      c10::OptionalDeviceGuard guard;
      if (!src_device.is_cpu()) guard.reset_device(src_device);
      packed = at::empty({chunk.nbytes}, at::TensorOptions().dtype(at::kByte).device(src_device));
      pack_chunk(src, chunk, packed);
    }
    c10::OptionalDeviceGuard guard;
    if (!dst_device.is_cpu()) guard.reset_device(dst_device);
    // One device-to-device copy per bucket (a peer copy between GPUs).
    at::Tensor landed = packed.to(dst_device, /*non_blocking=*/false, /*copy=*/true);
    int64_t offset = 0;
    for (size_t i = chunk.begin; i < chunk.end; ++i) {
      auto out = bytes_of(dst[i].second);
      out.copy_(landed.narrow(0, offset, out.numel()));
      offset += out.numel();
    }
    stats.bytes += chunk.nbytes;
    ++stats.buckets;
  }
  synchronize_device(src_device);
  synchronize_device(dst_device);
  stats.seconds = now_s() - start;
  return stats;
}

DeviceCopyStats copy_weights_raw(const NamedTensors& src, const NamedTensors& dst) {
  check_match(src, dst);
  DeviceCopyStats stats;
  if (src.empty()) return stats;
  const double start = now_s();
  const auto dst_device = dst.front().second.device();
  c10::OptionalDeviceGuard guard;
  if (!dst_device.is_cpu()) guard.reset_device(dst_device);
  for (size_t i = 0; i < src.size(); ++i) {
    dst[i].second.copy_(src[i].second);
    stats.bytes += src[i].second.numel() * static_cast<int64_t>(src[i].second.element_size());
    ++stats.buckets;
  }
  synchronize_device(src.front().second.device());
  synchronize_device(dst_device);
  stats.seconds = now_s() - start;
  return stats;
}

}  // namespace vime::weight_sync
