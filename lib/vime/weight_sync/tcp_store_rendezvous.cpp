#include "vime/weight_sync/tcp_store_rendezvous.hpp"

#include <chrono>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/weight_sync/unique_id_pickle.hpp"

namespace vime::weight_sync {
namespace {

std::chrono::milliseconds to_ms(double timeout_s) {
  return std::chrono::milliseconds(static_cast<int64_t>((timeout_s > 0 ? timeout_s : 300) * 1000));
}

}  // namespace

TcpStoreHost::TcpStoreHost(int port, int world, const NcclUniqueId& id, double timeout_s)
    : port_(port > 0 ? port : http::free_port(kAnyAddress)) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port_);
  options.isServer = true;
  options.numWorkers = static_cast<std::size_t>(world);
  options.waitWorkers = true;
  options.timeout = to_ms(timeout_s);
  try {
    store_ = std::make_unique<c10d::TCPStore>("127.0.0.1", options);
    const std::string payload = pickle_unique_id(id);
    store_->set(kUniqueIdStoreKey, std::vector<uint8_t>(payload.begin(), payload.end()));
  } catch (const c10::Error& e) {
    throw Error("TCPStore server on port " + std::to_string(port_) + " for " +
                std::to_string(world) + " ranks: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error("TCPStore server on port " + std::to_string(port_) + " for " +
                std::to_string(world) + " ranks: " + e.what());
  }
}

TcpStoreHost::~TcpStoreHost() = default;

NcclUniqueId fetch_unique_id(const std::string& host, int port, int world, double timeout_s) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = false;
  // Counted among the host's numWorkers, as vLLM's clients (world_size given) are.
  options.numWorkers = static_cast<std::size_t>(world);
  options.waitWorkers = true;
  options.timeout = to_ms(timeout_s);
  std::vector<uint8_t> payload;
  try {
    c10d::TCPStore store(host, options);
    payload = store.get(kUniqueIdStoreKey);
  } catch (const c10::Error& e) {
    throw Error("init_info master_address " + host + ":" + std::to_string(port) +
                ": cannot read the NCCL unique id from the trainer's TCPStore: " +
                e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error("init_info master_address " + host + ":" + std::to_string(port) +
                ": cannot read the NCCL unique id from the trainer's TCPStore: " + e.what());
  }
  return unpickle_unique_id(
      std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
}

}  // namespace vime::weight_sync
