#include "vime/dist/process_group.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "vime/core/torch_compat.hpp"
#include "vime/dist/c10d_backends.hpp"
#include "vime/error.hpp"

namespace vime::dist {
namespace {

std::string where(const RankEnv& env) {
  return env.master_addr + ":" + std::to_string(env.master_port);
}

// "3", "2.5": a timeout as people write it (std::to_string(double) would say "3.000000").
std::string seconds(std::chrono::milliseconds ms) {
  const auto tenths = (ms.count() + 50) / 100;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "");
}

// The TCPStore of the job: rank 0 hosts it, every rank (rank 0 included) connects. Each rank then
// checks in under its own key, so a timeout can name the ranks that never arrived.
c10::intrusive_ptr<c10d::Store> rendezvous(const RankEnv& env, std::chrono::milliseconds timeout) {
  if (env.world_size == 1) return c10::make_intrusive<c10d::HashStore>();  // nobody to meet
  if (env.master_port <= 0 || env.master_port > 65535) {
    throw UsageError("distributed rendezvous: master port " + std::to_string(env.master_port) +
                     " is not a port; give --master-port or MASTER_PORT");
  }
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  options.isServer = env.rank == 0;
  options.numWorkers = static_cast<std::size_t>(env.world_size);
  options.waitWorkers = false;  // arrivals are counted below, by rank
  options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(
        env.rank == 0 ? std::string("0.0.0.0") : env.master_addr, options);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    if (env.rank == 0) {
      throw Error("distributed rendezvous: rank 0 cannot host the TCPStore on port " +
                  std::to_string(env.master_port) + " (" + what +
                  "); pick a free --master-port / MASTER_PORT");
    }
    throw Error("distributed rendezvous: rank " + std::to_string(env.rank) +
                " could not reach rank 0's TCPStore at " + where(env) + " within " +
                seconds(timeout) + " s (" + what +
                "); check --master-addr / MASTER_ADDR and --master-port / MASTER_PORT, and that "
                "rank 0 is running");
  }
  store->set("vime/arrived/" + std::to_string(env.rank), std::vector<uint8_t>{1});
  if (env.rank == 0) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      std::vector<int> missing;
      for (int r = 0; r < env.world_size; ++r) {
        if (!store->check({"vime/arrived/" + std::to_string(r)})) missing.push_back(r);
      }
      if (missing.empty()) break;
      if (std::chrono::steady_clock::now() > deadline) {
        std::string names;
        for (size_t i = 0; i < missing.size() && i < 16; ++i)
          names += (i ? ", " : "") + std::to_string(missing[i]);
        if (missing.size() > 16) names += ", ...";
        throw Error("distributed rendezvous at " + where(env) + ": " +
                    std::to_string(missing.size()) + " of " + std::to_string(env.world_size) +
                    " ranks did not arrive within " + seconds(timeout) +
                    " s (missing ranks: " + names +
                    "); start the same command on every node with --master-addr pointing at "
                    "node 0 (or raise --distributed-timeout-minutes)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    store->set("vime/go", std::vector<uint8_t>{1});
  } else {
    try {
      store->wait({"vime/go"}, timeout);
    } catch (const std::exception& e) {
      throw Error("distributed rendezvous at " + where(env) + ": rank " + std::to_string(env.rank) +
                  " waited " + seconds(timeout) +
                  " s for the other ranks to arrive; rank 0 reports which are missing");
    }
  }
  return store;
}

}  // namespace

std::unique_ptr<ProcessGroup> ProcessGroup::create(const RankEnv& env, const at::Device& device,
                                                   std::chrono::milliseconds timeout) {
  if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size) {
    throw UsageError("distributed: rank " + std::to_string(env.rank) + " of world size " +
                     std::to_string(env.world_size) + " is out of range");
  }
  auto store = rendezvous(env, timeout);
  if (device.is_cuda()) return make_nccl_group(store, env, device, timeout);
  return make_gloo_group(store, env, device, timeout);
}

std::unique_ptr<ProcessGroup> ProcessGroup::new_group(const std::vector<int>&,
                                                      const std::string& name) {
  throw Error("process group \"" + name + "\": this group cannot make subgroups");
}

double ProcessGroup::all_reduce_sum(double value) {
  if (size() == 1) return value;
  std::vector<at::Tensor> t{
      at::full({1}, value, at::TensorOptions().dtype(at::kDouble).device(device()))};
  all_reduce(t);
  return t[0].item<double>();
}

std::string ProcessGroup::broadcast_bytes(const std::string& payload, int root) {
  if (size() == 1) return payload;
  const auto on = at::TensorOptions().dtype(at::kLong).device(device());
  std::vector<at::Tensor> length{
      at::full({1}, static_cast<int64_t>(rank() == root ? payload.size() : 0), on)};
  broadcast(length, root);
  const int64_t n = length[0].item<int64_t>();
  at::Tensor bytes;
  if (rank() == root) {
    bytes = at::empty({n}, at::kByte);
    std::copy(payload.begin(), payload.end(), static_cast<char*>(bytes.data_ptr()));
    bytes = bytes.to(device());
  } else {
    bytes = at::empty({n}, at::TensorOptions().dtype(at::kByte).device(device()));
  }
  std::vector<at::Tensor> t{bytes};
  broadcast(t, root);
  if (rank() == root) return payload;
  auto host = t[0].cpu().contiguous();
  return std::string(static_cast<const char*>(host.data_ptr()), static_cast<size_t>(n));
}

std::vector<std::string> ProcessGroup::all_gather_bytes(const std::string& payload) {
  if (size() == 1) return {payload};
  const auto on = at::TensorOptions().dtype(at::kLong).device(device());
  auto my_length = at::full({1}, static_cast<int64_t>(payload.size()), on);
  std::vector<at::Tensor> lengths(size());
  for (auto& l : lengths) l = at::empty({1}, on);
  all_gather(lengths, my_length);
  int64_t max_length = 0;
  std::vector<int64_t> sizes;
  for (auto& l : lengths) {
    sizes.push_back(l.item<int64_t>());
    max_length = std::max(max_length, sizes.back());
  }
  auto mine = at::zeros({std::max<int64_t>(max_length, 1)}, at::kByte);
  std::copy(payload.begin(), payload.end(), static_cast<char*>(mine.data_ptr()));
  mine = mine.to(device());
  std::vector<at::Tensor> all(size());
  for (auto& a : all) a = at::empty_like(mine);
  all_gather(all, mine);
  std::vector<std::string> out;
  for (int r = 0; r < size(); ++r) {
    auto host = all[r].cpu().contiguous();
    out.emplace_back(static_cast<const char*>(host.data_ptr()), static_cast<size_t>(sizes[r]));
  }
  return out;
}

}  // namespace vime::dist
