#include "vime/weight_sync/packed_broadcast.hpp"

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>

#include "vime/weight_sync/nccl_communicator.hpp"

namespace vime::weight_sync {
namespace {

at::Tensor as_bytes(const at::Tensor& t) { return t.contiguous().view({-1}).view(at::kByte); }

// A chunk of one contiguous tensor goes out as it is: no buffer, no copy.
bool sent_in_place(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                   const PackedChunk& chunk) {
  return chunk.end - chunk.begin == 1 && tensors[chunk.begin].second.is_contiguous();
}

}  // namespace

void pack_chunk(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                const PackedChunk& chunk, at::Tensor out) {
  std::vector<at::Tensor> parts;
  for (size_t i = chunk.begin; i < chunk.end; ++i) parts.push_back(as_bytes(tensors[i].second));
  if (parts.size() == 1) {
    out.copy_(parts[0]);
  } else {
    at::cat_out(out, parts, 0);
  }
}

void broadcast_packed(NcclCommunicator& comm,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::vector<PackedChunk>& chunks, int64_t num_buffers) {
  int64_t largest = 0;
  size_t to_pack = 0;
  for (const auto& c : chunks) {
    if (sent_in_place(tensors, c)) continue;
    largest = std::max(largest, c.nbytes);
    ++to_pack;
  }
  const size_t ring = static_cast<size_t>(std::min<int64_t>(num_buffers, int64_t(to_pack)));
  if (ring < 2) {  // packing in turn: asked for, or at most one chunk to pack
    // Freed temporaries are safe to drop right after their broadcast is enqueued: the caching
    // allocator hands their memory only to later work on the same (default) stream.
    for (const auto& chunk : chunks) {
      if (sent_in_place(tensors, chunk)) {
        comm.broadcast(as_bytes(tensors[chunk.begin].second), 0, /*as_bytes=*/true);
        continue;
      }
      auto buffer =
          at::empty({chunk.nbytes}, at::TensorOptions().dtype(at::kByte).device(comm.device()));
      pack_chunk(tensors, chunk, buffer);
      comm.broadcast(buffer, 0, /*as_bytes=*/true);
    }
    return;
  }
  const at::Device device = comm.device();
  const c10::Stream main(c10::Stream::DEFAULT, device);
  const c10::Stream side =
      c10::impl::getDeviceGuardImpl(device.type())->getStreamFromGlobalPool(device);
  // Allocated on the main stream, which waits for every pack before it broadcasts: when these
  // are freed at the end, no work on the side stream can still touch them.
  std::vector<at::Tensor> buffers;
  std::vector<c10::Event> packed, sent;
  for (size_t b = 0; b < ring; ++b) {
    buffers.push_back(at::empty({largest}, at::TensorOptions().dtype(at::kByte).device(device)));
    packed.emplace_back(device.type());
    sent.emplace_back(device.type());
  }
  c10::Event weights_ready(device.type());  // the optimizer's last writes, on the main stream
  weights_ready.record(main);
  weights_ready.block(side);
  size_t k = 0;  // packed chunks so far
  for (const auto& chunk : chunks) {
    if (sent_in_place(tensors, chunk)) {
      comm.broadcast(as_bytes(tensors[chunk.begin].second), 0, /*as_bytes=*/true);
      continue;
    }
    const size_t b = k % ring;
    at::Tensor out = buffers[b].narrow(0, 0, chunk.nbytes);
    {
      c10::StreamGuard on_side(side);
      if (k >= ring) sent[b].block(side);  // buffer b's previous broadcast is done with it
      pack_chunk(tensors, chunk, out);
      packed[b].record(side);
    }
    packed[b].block(main);
    comm.broadcast(out, 0, /*as_bytes=*/true);
    sent[b].record(main);
    ++k;
  }
}

}  // namespace vime::weight_sync
