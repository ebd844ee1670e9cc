// The trainer's packed broadcast (vLLM's packed_broadcast_producer): each chunk of the plan is
// packed into one byte buffer and broadcast from it. With num_buffers >= 2 the packing runs on a
// side stream into a ring of num_buffers buffers, chunk k+1 packing while chunk k is on the wire,
// so on a fast link (NVLink) the copies do not add to the transfer; num_buffers 1 packs and sends
// in turn on the main stream. Broadcasts stay on the device's default stream (the communicator's).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "vime/weight_sync/transfer_protocol.hpp"

namespace vime::weight_sync {

class NcclCommunicator;

// Copies chunk's tensors, as bytes in order, into `out` (exactly chunk.nbytes) on the current
// stream.
void pack_chunk(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                const PackedChunk& chunk, at::Tensor out);

void broadcast_packed(NcclCommunicator& comm,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::vector<PackedChunk>& chunks, int64_t num_buffers);

}  // namespace vime::weight_sync
