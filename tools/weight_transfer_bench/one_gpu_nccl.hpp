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

namespace vime::bench {

inline void nccl_as_separate_host(const std::string& host_id) {
  ::setenv("NCCL_HOSTID", host_id.c_str(), 1);
  ::setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  ::setenv("NCCL_IB_DISABLE", "1", 1);
}

}  // namespace vime::bench
