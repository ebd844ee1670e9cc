// [gpu] The whole NCCL weight transfer: this process (cuda:0) sends a random Qwen3-0.6B shaped bf16
// model to a receiver process on GPU 1 (weight_transfer_bench receiver, a stand-in for
// `vime serve --weight-transfer-config '{"backend":"nccl"}'`), and the receiver's tensors then
// equal the trainer's bit for bit: unique-id and TCPStore rendezvous, packed and unpacked. Then
// `vime train --update-weight-transport nccl` against a real `vime serve` engine, with --ci-test
// checking that the engine generates with the trained weights after every update. On a one-GPU
// machine both sides share GPU 0 and NCCL moves the bytes over loopback sockets (one_gpu_nccl.hpp).
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "common/model_presets.hpp"
#include "loop/metrics_file.hpp"
#include "loop/tiny_task.hpp"
#include "support/ports.hpp"
#include "support/skip.hpp"
#include "support/test_support.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/nccl_weight_sender.hpp"
#include "vime/weight_sync/tcp_store_rendezvous.hpp"
#include "weight_transfer_bench/one_gpu_nccl.hpp"
#include "weight_transfer_bench/weight_checksum.hpp"

using vime::Json;
using namespace vime::weight_sync;

namespace {

int cuda_devices() {
  if (!at::hasCUDA()) return 0;
  return int(c10::impl::getDeviceGuardImpl(at::kCUDA)->deviceCount());
}

// The GPU the engine side uses: 1 when there is one, else the trainer's GPU 0 (socket transport).
int engine_gpu() { return cuda_devices() >= 2 ? 1 : 0; }

// Shell env prefix placing a process on `gpu`, as a separate NCCL host when it shares GPU 0.
std::string gpu_env(int gpu, const std::string& host_id) {
  std::string env = "CUDA_VISIBLE_DEVICES=" + std::to_string(gpu) + " ";
  if (engine_gpu() == 0) {
    for (const auto& [name, value] : vime::bench::nccl_separate_host_env(host_id))
      env += name + "=" + value + " ";
  }
  return env;
}

struct ReceiverProcess {
  pid_t pid = -1;
  std::string url;
  explicit ReceiverProcess(const std::string& model) {
    const int port = vime::http::free_port(vime::weight_sync::kAnyAddress);
    url = "http://127.0.0.1:" + std::to_string(port);
    pid = ::fork();
    if (pid == 0) {
      ::setenv("CUDA_VISIBLE_DEVICES", std::to_string(engine_gpu()).c_str(), 1);
      if (engine_gpu() == 0) vime::bench::nccl_as_separate_host("vime-test-receiver");
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
  if (cuda_devices() < 1) VIME_SKIP(vime::test::kNoCuda);
  if (engine_gpu() == 0) vime::bench::nccl_as_separate_host("vime-test-trainer");
  ReceiverProcess receiver("qwen3-0.6b");
  const at::Device device("cuda:0");
  vime::Model model(vime::presets::qwen3_0_6b(), at::kBFloat16, device, 1);
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

TEST_CASE(
    "vime train --update-weight-transport nccl: a vime serve engine generates with the trained "
    "weights after every update",
    "[gpu][weight_sync_gpu]") {
  if (cuda_devices() < 1) VIME_SKIP(vime::test::kNoCuda);
  const auto task = vime::test::tiny_arith_task().string();
  vime::test::TempDir run;
  const std::string log = (run.path() / "serve.log").string();
  vime::test::run_command("(" + gpu_env(engine_gpu(), "vime-test-serve") + VIME_BIN + " serve " +
                          task + "/model --port 0" +
                          " --weight-transfer-config '{\"backend\":\"nccl\"}' > " + log +
                          " 2>&1 & echo $! > " + (run.path() / "serve.pid").string() + ")");
  const int port = vime::test::wait_reported_port(log, 300);  // --port 0: the one it bound
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  bool healthy = false;
  for (int i = 0; i < 1200 && !healthy; ++i) {
    healthy = vime::http::fetch(vime::http::Request::get(url + "/health", 2)).ok();
    if (!healthy) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const pid_t serve_pid = std::stoi(vime::read_text_file(run.path() / "serve.pid"));
  struct Kill {
    pid_t pid;
    ~Kill() { ::kill(pid, SIGTERM); }
  } kill_serve{serve_pid};
  REQUIRE(healthy);

  const auto metrics = run.path() / "metrics.jsonl";
  auto r = vime::test::run_command(
      gpu_env(0, "vime-test-train") + VIME_BIN + " train --hf-checkpoint " + task +
      "/model --prompt-data " + task +
      "/data/train.jsonl --input-key input --label-key label"
      " --rm-type math --advantage-estimator grpo --rollout-batch-size 4 --n-samples-per-prompt 4"
      " --global-batch-size 16 --rollout-max-response-len 8 --lr 1e-3 --num-rollout 3 --ci-test"
      " --rollout-external-engine-addrs 127.0.0.1:" +
      std::to_string(port) + " --update-weight-transport nccl --metrics-jsonl " + metrics.string() +
      " 2>&1");
  INFO(r.output << "\n--- vime serve log ---\n" << vime::read_text_file(log));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("nccl"));
  // After each update the engine's log-probs match the trainer's (stale weights would be off by the
  // update's size: lr 1e-3 moves them visibly), and it reports the last update's version.
  auto m = vime::test::read_metrics(metrics);
  REQUIRE(m["train/train_rollout_logprob_abs_diff"].size() >= 3);
  for (double d : m["train/train_rollout_logprob_abs_diff"]) CHECK(d < 1e-3);
  const vime::Json info =
      vime::http::fetch_json(vime::http::Request::get(url + "/weight_info", 10), "weight_info");
  CHECK(info.at("weight_version").as_string() == "3");
}
