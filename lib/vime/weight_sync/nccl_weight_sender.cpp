#include "vime/weight_sync/nccl_weight_sender.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <unistd.h>

#include <chrono>

#include "vime/core/base64.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/concurrent_posts.hpp"
#include "vime/weight_sync/nccl_communicator.hpp"
#include "vime/weight_sync/packed_broadcast.hpp"
#include "vime/weight_sync/tcp_store_rendezvous.hpp"

namespace vime::weight_sync {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string strip_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool is_local(const std::string& url) {
  return url.find("://127.") != std::string::npos || url.find("://localhost") != std::string::npos;
}

std::string default_master_address(const std::vector<std::string>& urls) {
  bool all_local = true;
  for (const auto& u : urls) all_local = all_local && is_local(u);
  if (all_local) return "127.0.0.1";
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    throw Error(
        "NCCL weight transfer (TCPStore mode): cannot find this host's name; set the "
        "master address the servers should connect to");
  }
  return name;
}

// As Model::hf_tensors() holds it: the vocabulary tensors cut back to the model's vocabulary.
bool is_vocab_tensor(const std::string& name) {
  return name == "model.embed_tokens.weight" || name == "lm_head.weight";
}

}  // namespace

NcclWeightSender::NcclWeightSender() = default;
NcclWeightSender::~NcclWeightSender() = default;

bool NcclWeightSender::connected() const { return comm_ && !comm_->aborted(); }

void NcclWeightSender::connect(const std::vector<std::string>& server_urls,
                               const NcclSenderOptions& options) {
  if (server_urls.empty()) throw Error("NCCL weight transfer: no server URLs to send weights to");
  comm_.reset();
  store_.reset();
  options_ = options;
  urls_.clear();
  for (const auto& u : server_urls) urls_.push_back(strip_slash(u));
  const double control_timeout = std::min(options.timeout_s > 0 ? options.timeout_s : 60.0, 60.0);

  std::vector<int64_t> offsets;
  int64_t world = 1;
  for (const auto& url : urls_) {
    const Json answer = http::fetch_json(
        http::Request::get(url + "/get_world_size?include_dp=true", control_timeout)
            .bearer(options.api_key),
        "NCCL weight transfer: GET /get_world_size");
    const int64_t w = answer.at("world_size").as_int();
    if (w < 1) throw Error(url + "/get_world_size: world_size " + std::to_string(w) + " < 1");
    offsets.push_back(world);
    world += w;
  }

  const NcclUniqueId id = NcclCommunicator::new_unique_id();
  NcclInitInfo info;
  info.world_size = world;
  info.packed = options.packed;
  info.packed_buffer_size_bytes = options.packed_buffer_size_bytes;
  info.packed_num_buffers = options.packed_num_buffers;
  int port = 0;
  if (options.use_unique_id) {
    info.nccl_unique_id_b64 = base64_encode(std::string_view(id.internal, sizeof(id.internal)));
  } else {
    port = options.master_port > 0 ? options.master_port : http::free_port(kAnyAddress);
    info.master_address =
        options.master_address.empty() ? default_master_address(urls_) : options.master_address;
    info.master_port = port;
  }
  std::vector<http::Request> inits;
  for (size_t i = 0; i < urls_.size(); ++i) {
    info.rank_offset = offsets[i];
    Json body = Json::object();
    body["init_info"] = info.to_json();
    inits.push_back(
        http::Request::post_json(urls_[i] + "/init_weight_transfer_engine", body, options.timeout_s)
            .bearer(options.api_key));
  }
  // The servers block in their init until every rank joined, so their calls go out first.
  ConcurrentPosts posts(std::move(inits), "POST /init_weight_transfer_engine");
  const FailureCheck failed = [&posts] { return posts.first_failure(); };
  try {
    if (!options.use_unique_id)
      store_ = std::make_unique<TcpStoreHost>(port, int(world), id, options.timeout_s, failed);
    comm_ = NcclCommunicator::create(id, int(world), 0, options.device, options.timeout_s, failed);
  } catch (const Error& e) {
    // One line that names every engine and where its init call stands.
    store_.reset();
    throw Error("NCCL weight transfer rendezvous (" +
                std::string(options.use_unique_id ? "unique id" : "TCPStore") + "): " + e.what() +
                "; " + posts.status());
  }
  try {
    posts.join_and_check();
  } catch (...) {
    comm_.reset();
    throw;
  }
  world_ = int(world);
}

SendStats NcclWeightSender::send(const Model& model, const std::string& weight_version) {
  // LoRA: the merged weights (under TP whole on this rank; the group gathers with it).
  if (model.has_lora()) return send(model.merged_hf_tensors(), weight_version);
  if (!model.tensor_parallel().is_parallel()) return send(model.hf_tensors(), weight_version);
  // Tensor parallel: the shards are gathered into HF layout one packed bucket at a time (as
  // slime gathers them), so no whole copy of the model is ever held here; the group's other
  // ranks gather with this one (follow_gathered_send).
  const auto& params = model.named_parameters();
  std::vector<TensorMeta> metas;
  for (size_t i = 0; i < params.size(); ++i) {
    auto shape = model.full_shape(i);
    if (is_vocab_tensor(params[i].first)) shape[0] = model.config().vocab_size;
    metas.push_back({params[i].first, dtype_name(params[i].second.scalar_type()), shape});
  }
  std::vector<PackedChunk> chunks;
  if (options_.packed) {
    chunks = plan_packed_chunks(metas, options_.packed_buffer_size_bytes);
  } else {
    for (size_t i = 0; i < metas.size(); ++i) chunks.push_back({i, i + 1, metas[i].nbytes()});
  }
  return round(metas, weight_version, [&] {
    for (const auto& chunk : chunks) {
      std::vector<std::pair<std::string, at::Tensor>> bucket;
      for (size_t i = chunk.begin; i < chunk.end; ++i) {
        auto t = model.full_parameter(i);
        if (is_vocab_tensor(metas[i].name)) t = t.narrow(0, 0, metas[i].shape[0]);
        bucket.emplace_back(metas[i].name, t.contiguous());
      }
      if (!options_.packed) {
        comm_->broadcast(bucket[0].second, 0);
        continue;
      }
      broadcast_packed(*comm_, bucket, {PackedChunk{0, bucket.size(), chunk.nbytes}}, 1);
    }
  });
}

void follow_gathered_send(const Model& model) {
  at::NoGradGuard no_grad;
  if (model.has_lora()) {
    (void)model.merged_hf_tensors();
    return;
  }
  for (size_t i = 0; i < model.named_parameters().size(); ++i) (void)model.full_parameter(i);
}

// Every server at once: with many engines, one round trip instead of one per engine.
void NcclWeightSender::post_to_all(const std::string& route, const Json& body, double timeout_s) {
  std::vector<http::Request> requests;
  for (const auto& url : urls_)
    requests.push_back(
        http::Request::post_json(url + route, body, timeout_s).bearer(options_.api_key));
  ConcurrentPosts(std::move(requests), "NCCL weight transfer: POST " + route).join_and_check();
}

void NcclWeightSender::broadcast_all(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                                     const std::vector<TensorMeta>& metas) {
  if (!options_.packed) {
    for (const auto& [name, t] : tensors) comm_->broadcast(t.contiguous(), 0);
    return;
  }
  broadcast_packed(*comm_, tensors, plan_packed_chunks(metas, options_.packed_buffer_size_bytes),
                   options_.pipeline_packing ? options_.packed_num_buffers : 1);
}

SendStats NcclWeightSender::send(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                                 const std::string& weight_version) {
  if (!connected()) {
    throw Error(
        "NCCL weight transfer: not connected (the last round failed or connect() was "
        "never called)");
  }
  std::vector<TensorMeta> metas;
  for (const auto& [name, t] : tensors) {
    if (t.device() != comm_->device()) {
      throw Error("NCCL weight transfer: tensor " + name + " is on " + t.device().str() +
                  ", the communicator on " + comm_->device().str());
    }
    metas.push_back({name, dtype_name(t.scalar_type()), t.sizes().vec()});
  }
  return round(metas, weight_version, [&] { broadcast_all(tensors, metas); });
}

SendStats NcclWeightSender::round(const std::vector<TensorMeta>& metas,
                                  const std::string& weight_version,
                                  const std::function<void()>& broadcast) {
  if (!connected()) {
    throw Error(
        "NCCL weight transfer: not connected (the last round failed or connect() was "
        "never called)");
  }
  const auto start = Clock::now();
  const double control_timeout = std::min(options_.timeout_s > 0 ? options_.timeout_s : 60.0, 60.0);
  UpdateInfo update;
  SendStats stats;
  update.tensors = metas;
  for (const auto& m : metas) stats.bytes += m.nbytes();
  stats.tensors = int64_t(metas.size());
  if (options_.legacy_packed_field) update.legacy_packed = options_.packed;
  Json body = Json::object();
  body["update_info"] = update.to_json();
  try {
    post_to_all("/start_weight_update", Json::object(), control_timeout);
    std::vector<http::Request> updates;
    for (const auto& url : urls_) {
      updates.push_back(http::Request::post_json(url + "/update_weights", body, options_.timeout_s)
                            .bearer(options_.api_key));
    }
    ConcurrentPosts posts(std::move(updates), "POST /update_weights");
    const auto broadcast_start = Clock::now();
    at::NoGradGuard no_grad;
    broadcast();
    comm_->wait("NCCL weight broadcast (" + std::to_string(stats.tensors) + " tensors)",
                options_.timeout_s, [&posts] { return posts.first_failure(); });
    stats.broadcast_seconds = since(broadcast_start);
    posts.join_and_check();
    Json finish = Json::object();
    finish["weight_version"] = weight_version;
    post_to_all("/finish_weight_update", finish, control_timeout);
  } catch (...) {
    comm_.reset();  // the group is unusable after a failed round: abort, re-init on connect()
    throw;
  }
  stats.seconds = since(start);
  return stats;
}

}  // namespace vime::weight_sync
