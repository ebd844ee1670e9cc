#include "vime/weight_sync/nccl_weight_receiver.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <map>

#include "vime/core/base64.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/model/moe.hpp"
#include "vime/weight_sync/nccl_communicator.hpp"
#include "vime/weight_sync/tcp_store_rendezvous.hpp"
#include "vime/weight_sync/transfer_protocol.hpp"

namespace vime::weight_sync {
namespace {

bool is_vocab_tensor(const std::string& name) {
  return name == "model.embed_tokens.weight" || name == "lm_head.weight";
}

// Where a received tensor goes: the parameter itself, or its first rows for the vocab-padded
// embedding / lm_head (as Model::load_tensors does). Undefined when the name or shape does not fit
// the model (the bytes are still received, to keep the broadcast sequence in step).
at::Tensor destination(const std::map<std::string, at::Tensor>& params, const TensorMeta& meta,
                       std::string& problem) {
  auto it = params.find(meta.name);
  at::Tensor expert;  // the Hub's per-expert name: that expert's slice of the stacked parameter
  if (auto stacked = stacked_expert_of(meta.name); it == params.end() && stacked) {
    if (auto s = params.find(stacked->first);
        s != params.end() && stacked->second < s->second.size(0)) {
      expert = s->second.select(0, stacked->second);
    }
  }
  if (it == params.end() && !expert.defined()) {
    if (meta.name != "lm_head.weight") problem = "\"" + meta.name + "\" is not a model parameter";
    return {};  // lm_head.weight of a tied model: nothing to update
  }
  const at::Tensor& param = expert.defined() ? expert : it->second;
  const auto& s = meta.shape;
  if (is_vocab_tensor(meta.name) && s.size() == 2 && param.dim() == 2 && s[1] == param.size(1) &&
      s[0] <= param.size(0)) {
    return param.narrow(0, 0, s[0]);
  }
  if (param.sizes() != at::IntArrayRef(s)) {
    problem = "\"" + meta.name + "\" has shape " + c10::str(at::IntArrayRef(s)) +
              ", the model needs " + c10::str(param.sizes());
    return {};
  }
  return param;
}

}  // namespace

NcclWeightReceiver::NcclWeightReceiver(const Json& config) {
  if (const Json* t = config.find("timeout_sec"); t && !t->is_null()) {
    timeout_s_ = t->as_double();
  }
  const Json* d = config.find("device");
  device_ = at::Device(d && !d->is_null() ? d->as_string() : std::string("cuda"));
  if (!device_.is_cuda() || !at::hasCUDA()) {
    throw Error("--weight-transfer-config {\"backend\": \"nccl\"} needs a CUDA device (" +
                (at::hasCUDA() ? "got " + device_.str() : no_cuda_reason()) +
                "); use {\"backend\": \"disk\"}");
  }
  NcclLibrary::get();  // fail now, at startup, when libnccl is missing
}

void NcclWeightReceiver::init(const Json& init_info) {
  const NcclInitInfo info = NcclInitInfo::from_json(init_info);
  comm_.reset();  // a new init replaces (and aborts) the previous communicator
  NcclUniqueId id;
  if (info.uses_unique_id()) {
    const std::string bytes =
        base64_decode(info.nccl_unique_id_b64, "init_info.nccl_unique_id_b64");
    if (bytes.size() != sizeof(id.internal)) {
      throw Error("init_info.nccl_unique_id_b64: decodes to " + std::to_string(bytes.size()) +
                  " bytes, an ncclUniqueId has 128");
    }
    std::copy(bytes.begin(), bytes.end(), id.internal);
  } else {
    id = fetch_unique_id(info.master_address, info.master_port, int(info.world_size), timeout_s_);
  }
  comm_ = NcclCommunicator::create(id, int(info.world_size), int(info.rank_offset), device_,
                                   timeout_s_);
  info_ = info;
}

void NcclWeightReceiver::update(const Json& update_info, Model& model) {
  if (!comm_ || comm_->aborted()) {
    throw Error("/update_weights: no NCCL communicator; call /init_weight_transfer_engine first");
  }
  const UpdateInfo update = UpdateInfo::from_json(update_info);
  const bool packed = update.legacy_packed.value_or(info_.packed);
  std::map<std::string, at::Tensor> params;
  for (const auto& [name, t] : model.named_parameters()) params.emplace(name, t);
  at::NoGradGuard no_grad;
  std::vector<std::string> problems;
  std::vector<at::Tensor> padded;  // vocab tensors whose padding rows get zeroed
  auto dest_of = [&](const TensorMeta& meta) {
    std::string problem;
    at::Tensor dest = destination(params, meta, problem);
    if (!problem.empty()) problems.push_back(problem);
    if (dest.defined() && is_vocab_tensor(meta.name)) padded.push_back(params.at(meta.name));
    return dest;
  };
  const auto bytes = at::TensorOptions().dtype(at::kByte).device(comm_->device());
  if (!packed) {
    for (const auto& meta : update.tensors) {
      at::Tensor dest = dest_of(meta);
      const auto type = scalar_type_from_name(meta.dtype_name);
      // Straight into the parameter when it can; else through a buffer (dtype change, no home).
      const bool direct = dest.defined() && dest.scalar_type() == type && dest.is_contiguous() &&
                          dest.device() == comm_->device();
      at::Tensor buffer = direct ? dest : at::empty(meta.shape, bytes.dtype(type));
      comm_->broadcast(buffer, 0);
      if (!direct && dest.defined()) dest.copy_(buffer);
    }
  } else {
    for (const auto& chunk : plan_packed_chunks(update.tensors, info_.packed_buffer_size_bytes)) {
      at::Tensor buffer = at::empty({chunk.nbytes}, bytes);
      comm_->broadcast(buffer, 0, /*as_bytes=*/true);
      int64_t offset = 0;
      for (size_t i = chunk.begin; i < chunk.end; ++i) {
        const auto& meta = update.tensors[i];
        const int64_t n = meta.nbytes();
        at::Tensor dest = dest_of(meta);
        if (dest.defined()) {
          dest.copy_(buffer.narrow(0, offset, n)
                         .view(scalar_type_from_name(meta.dtype_name))
                         .view(meta.shape));
        }
        offset += n;
      }
    }
  }
  comm_->wait("/update_weights: receiving " + std::to_string(update.tensors.size()) + " tensors",
              timeout_s_);
  for (auto& param : padded) {
    const auto& meta_rows = model.config().vocab_size;
    if (param.size(0) > meta_rows) param.narrow(0, meta_rows, param.size(0) - meta_rows).zero_();
  }
  if (!problems.empty()) {
    throw Error(
        "/update_weights: " + std::to_string(problems.size()) +
        " tensors did not fit the served model (received and dropped), first: " + problems.front());
  }
}

NcclWeightReceiver::~NcclWeightReceiver() = default;

std::unique_ptr<WeightReceiver> make_nccl_weight_receiver(const Json& transfer_config) {
  return std::make_unique<NcclWeightReceiver>(transfer_config);
}

}  // namespace vime::weight_sync
