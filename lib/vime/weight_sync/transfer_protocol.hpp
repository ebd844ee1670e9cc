// The JSON bodies of vLLM's NCCL weight transfer and the packing plan of its update rounds,
// torch-free so the HTTP side and the tests build without ATen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/json.hpp"

namespace vime::weight_sync {

inline constexpr int64_t kDefaultPackedBufferBytes = int64_t(1) << 30;  // vLLM's default, 1 GiB
inline constexpr int64_t kDefaultPackedNumBuffers = 2;

// /init_weight_transfer_engine {"init_info": ...}: TCPStore rendezvous (master_address/port) or a
// pre-shared unique id (nccl_unique_id_b64), never both.
struct NcclInitInfo {
  std::string master_address;  // TCP mode
  int master_port = 0;
  std::string nccl_unique_id_b64;  // unique-id mode
  int64_t rank_offset = 1;
  int64_t world_size = 0;
  bool packed = false;
  int64_t packed_buffer_size_bytes = kDefaultPackedBufferBytes;
  int64_t packed_num_buffers = kDefaultPackedNumBuffers;

  bool uses_unique_id() const { return !nccl_unique_id_b64.empty(); }
  Json to_json() const;  // the init_info object (without the {"init_info": } wrapper)
  // Accepts the object or the whole body; throws vime::Error on missing/contradictory fields.
  static NcclInitInfo from_json(const Json& json);
};

// One tensor of an update round, in broadcast order.
struct TensorMeta {
  std::string name;        // HF checkpoint name
  std::string dtype_name;  // torch attribute name: "bfloat16"
  std::vector<int64_t> shape;

  int64_t numel() const;
  int64_t nbytes() const;  // numel * itemsize
};

// /update_weights {"update_info": ...}. `legacy_packed` adds "packed" for vLLM < 0.28 servers
// (>= 0.28 reads packing from init_info and rejects the field).
struct UpdateInfo {
  std::vector<TensorMeta> tensors;
  std::optional<bool> legacy_packed;

  Json to_json() const;
  static UpdateInfo from_json(const Json& json);
};

// Packed mode: consecutive tensor ranges [begin, end) broadcast as one uint8 buffer each. vLLM's
// rule: append tensors in order, and flush once the accumulated bytes exceed the buffer size (so a
// chunk may pass it by one tensor); the partial rest is the last chunk.
struct PackedChunk {
  size_t begin = 0, end = 0;
  int64_t nbytes = 0;
};
std::vector<PackedChunk> plan_packed_chunks(const std::vector<TensorMeta>& tensors,
                                            int64_t buffer_size_bytes);

}  // namespace vime::weight_sync
