#include "vime/weight_sync/transfer_protocol.hpp"

#include "vime/error.hpp"
#include "vime/weight_sync/nccl_library.hpp"

namespace vime::weight_sync {
namespace {

const Json& unwrap(const Json& json, std::string_view key) {
  if (!json.is_object()) {
    throw Error(std::string(key) + ": expected a JSON object, got " + json.type_name());
  }
  if (const Json* inner = json.find(key)) return *inner;
  return json;
}

}  // namespace

Json NcclInitInfo::to_json() const {
  Json j = Json::object();
  if (uses_unique_id()) {
    j["nccl_unique_id_b64"] = nccl_unique_id_b64;
  } else {
    j["master_address"] = master_address;
    j["master_port"] = master_port;
  }
  j["rank_offset"] = rank_offset;
  j["world_size"] = world_size;
  j["packed"] = packed;
  j["packed_buffer_size_bytes"] = packed_buffer_size_bytes;
  j["packed_num_buffers"] = packed_num_buffers;
  return j;
}

NcclInitInfo NcclInitInfo::from_json(const Json& json) {
  const Json& j = unwrap(json, "init_info");
  NcclInitInfo info;
  const bool has_uid = j.contains("nccl_unique_id_b64") && !j.at("nccl_unique_id_b64").is_null();
  const bool has_tcp = j.contains("master_address") && !j.at("master_address").is_null();
  if (has_uid == has_tcp) {
    throw Error("init_info: give either nccl_unique_id_b64 or master_address/master_port (" +
                std::string(has_uid ? "both" : "neither") + " given)");
  }
  if (has_uid) {
    info.nccl_unique_id_b64 = j.at("nccl_unique_id_b64").as_string();
  } else {
    info.master_address = j.at("master_address").as_string();
    if (!j.contains("master_port")) throw Error("init_info: master_address needs master_port");
    info.master_port = int(j.at("master_port").as_int());
  }
  if (!j.contains("world_size")) throw Error("init_info: world_size is missing");
  info.world_size = j.at("world_size").as_int();
  if (const Json* r = j.find("rank_offset")) info.rank_offset = r->as_int();
  if (const Json* p = j.find("packed"); p && !p->is_null()) info.packed = p->as_bool();
  if (const Json* b = j.find("packed_buffer_size_bytes"); b && !b->is_null()) {
    info.packed_buffer_size_bytes = b->as_int();
  }
  if (const Json* n = j.find("packed_num_buffers"); n && !n->is_null()) {
    info.packed_num_buffers = n->as_int();
  }
  if (info.world_size < 2 || info.rank_offset < 1 || info.rank_offset >= info.world_size) {
    throw Error("init_info: rank_offset " + std::to_string(info.rank_offset) + " and world_size " +
                std::to_string(info.world_size) +
                " do not fit (the trainer is rank 0, receivers 1..world_size-1)");
  }
  if (info.packed_buffer_size_bytes <= 0) {
    throw Error("init_info: packed_buffer_size_bytes must be > 0");
  }
  return info;
}

int64_t TensorMeta::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t TensorMeta::nbytes() const { return numel() * dtype_item_size(dtype_name); }

Json UpdateInfo::to_json() const {
  Json names = Json::array(), dtypes = Json::array(), shapes = Json::array();
  for (const auto& t : tensors) {
    names.push_back(t.name);
    dtypes.push_back(t.dtype_name);
    shapes.push_back(Json(t.shape));
  }
  Json j = Json::object();
  j["names"] = std::move(names);
  j["dtype_names"] = std::move(dtypes);
  j["shapes"] = std::move(shapes);
  if (legacy_packed) j["packed"] = *legacy_packed;
  return j;
}

UpdateInfo UpdateInfo::from_json(const Json& json) {
  const Json& j = unwrap(json, "update_info");
  for (const char* key : {"names", "dtype_names", "shapes"}) {
    if (!j.contains(key)) throw Error(std::string("update_info: ") + key + " is missing");
  }
  const auto& names = j.at("names").as_array();
  const auto& dtypes = j.at("dtype_names").as_array();
  const auto& shapes = j.at("shapes").as_array();
  if (dtypes.size() != names.size() || shapes.size() != names.size()) {
    throw Error("update_info: names, dtype_names and shapes differ in length (" +
                std::to_string(names.size()) + ", " + std::to_string(dtypes.size()) + ", " +
                std::to_string(shapes.size()) + ")");
  }
  UpdateInfo info;
  for (size_t i = 0; i < names.size(); ++i) {
    TensorMeta t{names[i].as_string(), dtypes[i].as_string(), {}};
    if (t.dtype_name.rfind("torch.", 0) == 0) t.dtype_name.erase(0, 6);
    dtype_item_size(t.dtype_name);  // throws on an unknown dtype before any byte moves
    for (const auto& d : shapes[i].as_array()) {
      t.shape.push_back(d.as_int());
      if (t.shape.back() < 0) throw Error("update_info: " + t.name + " has a negative dimension");
    }
    info.tensors.push_back(std::move(t));
  }
  if (const Json* p = j.find("packed"); p && !p->is_null()) info.legacy_packed = p->as_bool();
  return info;
}

std::vector<PackedChunk> plan_packed_chunks(const std::vector<TensorMeta>& tensors,
                                            int64_t buffer_size_bytes) {
  std::vector<PackedChunk> chunks;
  PackedChunk current;
  for (size_t i = 0; i < tensors.size(); ++i) {
    current.end = i + 1;
    current.nbytes += tensors[i].nbytes();
    if (current.nbytes > buffer_size_bytes) {
      chunks.push_back(current);
      current = PackedChunk{i + 1, i + 1, 0};
    }
  }
  if (current.end > current.begin) chunks.push_back(current);
  return chunks;
}

}  // namespace vime::weight_sync
