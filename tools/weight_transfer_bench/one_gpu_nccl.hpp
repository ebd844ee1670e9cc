// NCCL refuses two ranks of one communicator on the same GPU ("Duplicate GPU detected"), which is
// what a trainer -> engine transfer on a one-GPU machine is. NCCL only calls two ranks duplicates
// when their host hashes match too, and NCCL_HOSTID sets the host hash: give the two processes
// different ids and NCCL treats them as two hosts, moving the bytes through its socket transport on
// the loopback interface. The protocol, the rendezvous and every byte are the real thing; the
// bandwidth is the socket's, not NVLink's, so only ratios against a raw ncclBroadcast measured the
// same way mean anything. Test and benchmark use only: call it in each process before NCCL starts.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace vime::bench {

// The environment that makes a process its own NCCL host on the loopback interface.
inline std::vector<std::pair<std::string, std::string>> nccl_separate_host_env(
    const std::string& host_id) {
  return {{"NCCL_HOSTID", host_id}, {"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_IB_DISABLE", "1"}};
}

inline void nccl_as_separate_host(const std::string& host_id) {
  for (const auto& [name, value] : nccl_separate_host_env(host_id))
    ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace vime::bench
