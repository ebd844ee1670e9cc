// The trainer's side of vLLM's NCCL weight transfer: rank 0 and only broadcast
// root of one communicator over every receiving server (`vllm serve` or `vime serve`), driving the
// weight-transfer routes over HTTP while it broadcasts. Pausing, resuming and resetting the prefix
// cache around send() are the caller's job.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vime/weight_sync/transfer_protocol.hpp"

namespace vime {
class Model;
}

namespace vime::weight_sync {

class NcclCommunicator;
class TcpStoreHost;

struct NcclSenderOptions {
  at::Device device{at::kCUDA};  // where the trainer's weights live
  // Rendezvous: a pre-shared unique id (vLLM with nccl_unique_id_b64), else vLLM's TCPStore mode
  // hosted here on master_port (0: a free port) and reached by the servers at master_address
  // (empty: 127.0.0.1 when every server is local, else this host's name).
  bool use_unique_id = true;
  std::string master_address;
  int master_port = 0;
  bool packed = true;  // --[no-]vllm-weight-sync-packed
  int64_t packed_buffer_size_bytes = kDefaultPackedBufferBytes;
  int64_t packed_num_buffers = kDefaultPackedNumBuffers;
  // Pack chunk k+1 on a side stream while chunk k is broadcast, into packed_num_buffers buffers
  // (vLLM's producer does the same); false packs and sends in turn (the benchmark's baseline).
  bool pipeline_packing = true;
  bool legacy_packed_field = false;  // also send update_info.packed (vLLM 0.16-0.27)
  double timeout_s = 900;            // --vllm-weight-transfer-timeout-sec
  std::string api_key;
};

struct SendStats {
  int64_t tensors = 0;
  int64_t bytes = 0;
  double seconds = 0;            // the whole round, start_weight_update to finish_weight_update
  double broadcast_seconds = 0;  // first broadcast enqueued to the last one done
  double gb_per_s() const { return seconds > 0 ? double(bytes) / seconds / 1e9 : 0; }
};

class NcclWeightSender {
 public:
  NcclWeightSender();
  ~NcclWeightSender();
  NcclWeightSender(const NcclWeightSender&) = delete;
  NcclWeightSender& operator=(const NcclWeightSender&) = delete;

  // GET /get_world_size?include_dp=true per server, then one communicator of 1 + sum ranks
  // (server i at rank_offset 1 + sum of the ones before), warm-up included. Replaces (aborts) an
  // earlier communicator. Throws vime::Error naming the server or step that failed.
  void connect(const std::vector<std::string>& server_urls, const NcclSenderOptions& options);
  bool connected() const;
  int world_size() const { return world_; }

  // One update round of `model`'s HF-named tensors: /start_weight_update, /update_weights on every
  // server while this rank broadcasts in that order, /finish_weight_update {"weight_version"}.
  // A failure aborts the communicator (connect() again) and throws vime::Error. Under tensor
  // parallelism the shards are gathered a packed bucket at a time, a collective of the
  // tensor-parallel group whose other ranks call follow_gathered_send(model) meanwhile.
  SendStats send(const Model& model, const std::string& weight_version);
  // The same round over any named tensors (HF names, on options.device).
  SendStats send(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                 const std::string& weight_version);

  // For benchmarks: the communicator itself (null while not connected).
  NcclCommunicator* communicator() { return comm_.get(); }
  const NcclSenderOptions& options() const { return options_; }

 private:
  SendStats round(const std::vector<TensorMeta>& metas, const std::string& weight_version,
                  const std::function<void()>& broadcast);
  void broadcast_all(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                     const std::vector<TensorMeta>& metas);
  void post_to_all(const std::string& route, const Json& body, double timeout_s);

  NcclSenderOptions options_;
  std::vector<std::string> urls_;
  int world_ = 0;
  std::unique_ptr<TcpStoreHost> store_;  // TCPStore mode: kept while vLLM's group may use it
  std::unique_ptr<NcclCommunicator> comm_;
};

// A tensor-parallel rank > 0's part in rank 0's send(model) (or any Model::hf_tensors() of rank
// 0): the same gathers, in the same order, each dropped at once.
void follow_gathered_send(const Model& model);

}  // namespace vime::weight_sync
