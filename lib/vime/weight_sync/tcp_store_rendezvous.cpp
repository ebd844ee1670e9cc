#include "vime/weight_sync/tcp_store_rendezvous.hpp"

#include <chrono>
#include <mutex>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "vime/error.hpp"
#include "vime/http/net.hpp"
#include "vime/weight_sync/unique_id_pickle.hpp"

namespace vime::weight_sync {
namespace {

std::chrono::milliseconds to_ms(double timeout_s) {
  return std::chrono::milliseconds(static_cast<int64_t>((timeout_s > 0 ? timeout_s : 300) * 1000));
}

std::string seconds_text(double timeout_s) {
  return std::to_string(static_cast<int64_t>(timeout_s > 0 ? timeout_s : 300)) + " s";
}

}  // namespace

TcpStoreHost::TcpStoreHost(int port, int world, const NcclUniqueId& id, double timeout_s,
                           const FailureCheck& failure)
    : port_(port > 0 ? port : http::free_port(kAnyAddress)) {
  const std::string what = "TCPStore server on port " + std::to_string(port_) + " for " +
                           std::to_string(world) + " ranks";
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port_);
  options.isServer = true;
  options.numWorkers = static_cast<std::size_t>(world);
  options.waitWorkers = false;  // waited for below, where a failed receiver can end the wait
  options.timeout = to_ms(timeout_s);
  try {
    store_ = std::make_shared<c10d::TCPStore>("127.0.0.1", options);
    const std::string payload = pickle_unique_id(id);
    store_->set(kUniqueIdStoreKey, std::vector<uint8_t>(payload.begin(), payload.end()));
  } catch (const c10::Error& e) {
    throw Error(what + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error(what + ": " + e.what());
  }
  // waitForWorkers counts this rank in and blocks until all joined or the store's timeout; it
  // cannot be interrupted, so it runs on a thread that owns the store, and a failed receiver
  // (`failure`) ends the wait here at once. The thread ends by the store's own timeout.
  struct Wait {
    std::mutex mutex;
    bool done = false;
    std::string error;
  };
  auto wait = std::make_shared<Wait>();
  const auto start = std::chrono::steady_clock::now();
  std::thread([wait, store = store_] {
    std::string error;
    try {
      store->waitForWorkers();
    } catch (const c10::Error& e) {
      error = e.what_without_backtrace();
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(wait->mutex);
    wait->done = true;
    wait->error = error;
  }).detach();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(wait->mutex);
      if (wait->done) {
        // LibTorch 1.13's waitForWorkers returns at its timeout without saying so (2.x throws).
        if (wait->error.empty() && std::chrono::steady_clock::now() - start < to_ms(timeout_s))
          return;
        throw Error(what + ": not every rank joined within " + seconds_text(timeout_s) +
                    (wait->error.empty() ? "" : " (" + wait->error + ")"));
      }
    }
    if (std::string reason = failure ? failure() : std::string(); !reason.empty())
      throw Error(what + " gave up waiting for the ranks: " + reason);
    // The store's own timeout ends the thread; this one is the backstop should it not.
    if (std::chrono::steady_clock::now() - start > to_ms(timeout_s) + std::chrono::seconds(5))
      throw Error(what + ": not every rank joined within " + seconds_text(timeout_s));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
