// vLLM's TCPStore rendezvous: the trainer (rank 0) hosts a c10d TCPStore
// server and publishes the pickled ncclUniqueId under "broadcast_from/0/0"; each receiver connects
// as a client and reads it back.
#pragma once

#include <memory>
#include <string>

#include "vime/weight_sync/nccl_communicator.hpp"
#include "vime/weight_sync/nccl_library.hpp"

namespace c10d {
class TCPStore;
}

namespace vime::weight_sync {

class TcpStoreHost {
 public:
  // Listens on `port` (0: a free one) on every interface, publishes `id`, and waits up to
  // `timeout_s` for all `world` ranks to connect (itself included): blocks, so start the
  // receivers' init calls first. Throws vime::Error on a taken port, a timeout, or as soon as
  // `failure` returns a reason (a receiver's init call failed: it will never join).
  TcpStoreHost(int port, int world, const NcclUniqueId& id, double timeout_s,
               const FailureCheck& failure = {});
  ~TcpStoreHost();
  int port() const { return port_; }

 private:
  std::shared_ptr<c10d::TCPStore> store_;  // shared with the thread that waits for the ranks
  int port_ = 0;
};

// The store listens on every interface (servers may be on other hosts); a free port for it is
// http::free_port(kAnyAddress), taken before the constructor, which blocks before its port can be
// read back.
inline constexpr const char* kAnyAddress = "0.0.0.0";

// The receiver's side: connects to host:port (counted as one of the `world` workers the host waits
// for) and reads the unique id the trainer published.
NcclUniqueId fetch_unique_id(const std::string& host, int port, int world, double timeout_s);

}  // namespace vime::weight_sync
