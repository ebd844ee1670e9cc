// [gpu] The whole NCCL weight transfer on two GPUs: this process (cuda:0) sends a random Qwen3-0.6B
// shaped bf16 model to a receiver process on GPU 1 (weight_transfer_bench receiver, a stand-in for
// `vime serve --weight-transfer-config '{"backend":"nccl"}'`), and the receiver's tensors then
// equal the trainer's bit for bit: unique-id and TCPStore rendezvous, packed and unpacked.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "bench/model_presets.hpp"
#include "vime/http/fetch.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/nccl_weight_sender.hpp"
#include "vime/launch/net.hpp"
#include "vime/weight_sync/tcp_store_rendezvous.hpp"
#include "weight_transfer_bench/weight_checksum.hpp"

using vime::Json;
using namespace vime::weight_sync;

namespace {

int cuda_devices() {
  if (!at::hasCUDA()) return 0;
  return int(c10::impl::getDeviceGuardImpl(at::kCUDA)->deviceCount());
}

struct ReceiverProcess {
  pid_t pid = -1;
  std::string url;
  explicit ReceiverProcess(const std::string& model) {
    const int port = vime::launch::free_port(vime::weight_sync::kAnyAddress);
    url = "http://127.0.0.1:" + std::to_string(port);
    pid = ::fork();
    if (pid == 0) {
      ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
      const std::string port_s = std::to_string(port);
      ::execl(VIME_WEIGHT_TRANSFER_BENCH_BIN, VIME_WEIGHT_TRANSFER_BENCH_BIN, "receiver", "--port",
              port_s.c_str(), "--model", model.c_str(), "--seed", "2", nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 1200; ++i) {
      if (vime::http::fetch(vime::http::Request::get(url + "/health", 2)).ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL("the receiver process did not come up");
  }
  ~ReceiverProcess() {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  Json checksums() const {
    return vime::http::fetch_json(vime::http::Request::get(url + "/weight_checksums", 300),
                                  "checksums");
  }
};

}  // namespace

TEST_CASE("weight_sync: a Qwen3-shaped bf16 model crosses NCCL to a receiver process bit-exact",
          "[gpu][weight_sync_gpu]") {
  if (cuda_devices() < 2) {
    WARN("needs 2 CUDA devices: skipped");
    return;
  }
  ReceiverProcess receiver("qwen3-0.6b");
  const at::Device device("cuda:0");
  vime::Model model(vime::bench::preset("qwen3-0.6b"), at::kBFloat16, device, 1);
  const Json before = receiver.checksums().at("checksums");
  const Json trainer = vime::bench::weight_checksums(model.hf_tensors());
  REQUIRE(before.size() == trainer.size());
  CHECK(before != trainer);  // different seeds: the transfer has something to prove

  struct Case {
    bool unique_id, packed;
    int64_t buffer_bytes;
  };
  int version = 0;
  for (const Case c : {Case{true, true, int64_t(1) << 30}, Case{true, false, 0},
                       Case{false, true, int64_t(64) << 20}}) {
    INFO("unique_id " << c.unique_id << " packed " << c.packed);
    NcclSenderOptions options;
    options.device = device;
    options.use_unique_id = c.unique_id;
    options.packed = c.packed;
    if (c.buffer_bytes > 0) options.packed_buffer_size_bytes = c.buffer_bytes;
    options.timeout_s = 120;
    NcclWeightSender sender;
    sender.connect({receiver.url}, options);
    CHECK(sender.world_size() == 2);
    {  // new weights each round, so each case shows its own transfer
      at::NoGradGuard no_grad;
      for (const auto& [name, p] : model.named_parameters()) p.mul_(1.5);
    }
    const auto stats = sender.send(model, std::to_string(++version));
    CHECK(stats.bytes > int64_t(1) << 30);
    const Json remote = receiver.checksums();
    CHECK(remote.at("weight_version").as_string() == std::to_string(version));
    CHECK(remote.at("checksums") == vime::bench::weight_checksums(model.hf_tensors()));
  }
}
