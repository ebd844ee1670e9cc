// The TCPStore rendezvous value vLLM's workers read under "broadcast_from/0/0": pickle protocol 4
// of vLLM's ctypes struct pynccl_wrapper.ncclUniqueId, a fixed 247-byte template around the 128
// id bytes.
#pragma once

#include <string>
#include <string_view>

#include "vime/weight_sync/nccl_library.hpp"

namespace vime::weight_sync {

inline constexpr const char* kUniqueIdStoreKey = "broadcast_from/0/0";

std::string pickle_unique_id(const NcclUniqueId& id);
// The id out of a payload made by pickle_unique_id (or by vLLM's trainer side); throws
// vime::Error when the payload is not that template.
NcclUniqueId unpickle_unique_id(std::string_view payload);

}  // namespace vime::weight_sync
