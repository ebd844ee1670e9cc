// NCCL weight transfer benchmark: the trainer (this process, cuda:0) sends a random-init bf16
// Qwen3-shaped model to a receiver process (this program again, on --receiver-gpu) through
// NcclWeightSender -> HTTP routes -> NcclWeightReceiver, packed and unpacked, and in the same run a
// raw ncclBroadcast of the same bytes in the same chunks (the floor). One JSON line per
// (model, mode): packed (packing pipelined with the broadcasts), packed_serial (pack, then send),
// unpacked (one broadcast per tensor). --receiver-gpu 0 shares the trainer's GPU (a one-GPU
// machine): the two processes then talk through NCCL's socket transport (one_gpu_nccl.hpp), so read
// update_over_raw, not GB/s:
//   weight_transfer_bench bench [--models qwen3-0.6b,qwen3-4b] [--rounds 5] [--receiver-gpu 1]
//                               [--buffer-bytes 1073741824] [--tcp-store]
// The receiver alone (what the bench and the [gpu] weight_sync test start), a stand-in for
// `vime serve --weight-transfer-config '{"backend":"nccl"}'` with a checksum route:
//   weight_transfer_bench receiver --port P [--model qwen3-0.6b] [--seed 2]
#include <ATen/ATen.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/model_presets.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/concurrent_posts.hpp"
#include "vime/weight_sync/nccl_communicator.hpp"
#include "vime/weight_sync/nccl_weight_receiver.hpp"
#include "vime/weight_sync/nccl_weight_sender.hpp"
#include "vime/weight_sync/packed_broadcast.hpp"
#include "vime/weight_sync/tcp_store_rendezvous.hpp"
#include "weight_transfer_bench/one_gpu_nccl.hpp"
#include "weight_transfer_bench/weight_checksum.hpp"

namespace {

using vime::Json;
using namespace vime::weight_sync;
using Clock = std::chrono::steady_clock;

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return fallback;
}
bool has_flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == name) return true;
  }
  return false;
}

int run_receiver(int argc, char** argv) {
  const int port = std::stoi(flag(argc, argv, "--port", "0"));
  const auto config = vime::presets::by_name(flag(argc, argv, "--model", "qwen3-0.6b"));
  const uint64_t seed = std::stoull(flag(argc, argv, "--seed", "2"));
  const at::Device device("cuda:0");
  vime::Model model(config, at::kBFloat16, device, seed);
  NcclWeightReceiver receiver(Json::parse(R"({"backend":"nccl","device":"cuda:0"})"));
  std::string weight_version = "0";
  std::mutex mutex;  // one weight-transfer call at a time, as vime serve's routes do
  httplib::Server server;
  auto guarded = [&](auto body) {
    return [&, body](const httplib::Request& req, httplib::Response& res) {
      try {
        std::lock_guard<std::mutex> lock(mutex);
        const Json in = req.body.empty() ? Json::object() : Json::parse(req.body, req.path);
        res.set_content(body(in).dump(), "application/json");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "receiver %s: %s\n", req.path.c_str(), e.what());
        Json error = Json::object();
        error["error"] = std::string(e.what());
        res.status = 500;
        res.set_content(error.dump(), "application/json");
      }
    };
  };
  auto message = [](const char* text) {
    Json j = Json::object();
    j["message"] = text;
    return j;
  };
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  server.Get("/get_world_size",
             guarded([](const Json&) { return Json::parse(R"({"world_size":1})"); }));
  server.Post("/init_weight_transfer_engine", guarded([&](const Json& in) {
                receiver.init(in.at("init_info"));
                return message("Weight transfer initialized");
              }));
  server.Post("/start_weight_update",
              guarded([&](const Json&) { return message("Weight update started"); }));
  server.Post("/update_weights", guarded([&](const Json& in) {
                receiver.update(in.at("update_info"), model);
                return message("Weights updated");
              }));
  server.Post("/finish_weight_update", guarded([&](const Json& in) {
                if (const Json* v = in.find("weight_version")) weight_version = v->as_string();
                return message("Weight update finished");
              }));
  // The raw floor: receive these chunk sizes into one reused buffer.
  server.Post("/raw_broadcast", guarded([&](const Json& in) {
                int64_t largest = 0;
                for (const auto& n : in.at("chunks").as_array())
                  largest = std::max(largest, n.as_int());
                auto buffer =
                    at::empty({largest}, at::TensorOptions().dtype(at::kByte).device(device));
                for (const auto& n : in.at("chunks").as_array()) {
                  receiver.communicator()->broadcast(buffer.narrow(0, 0, n.as_int()), 0, true);
                }
                receiver.communicator()->wait("raw broadcast", receiver.timeout_s());
                return message("Raw broadcast received");
              }));
  server.Get("/weight_checksums", guarded([&](const Json&) {
               Json out = Json::object();
               out["weight_version"] = weight_version;
               out["checksums"] = vime::bench::weight_checksums(model.hf_tensors());
               return out;
             }));
  server.Post("/shutdown", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    std::thread([&] { server.stop(); }).detach();
  });
  std::fprintf(stderr, "receiver listening on 127.0.0.1:%d\n", port);
  if (!server.listen("127.0.0.1", port)) {
    std::fprintf(stderr, "receiver: cannot listen on port %d\n", port);
    return 1;
  }
  return 0;
}

// Starts this program as a receiver on `gpu` (CUDA_VISIBLE_DEVICES) and waits for /health.
pid_t start_receiver(const std::string& self, const std::string& model, int gpu, int port) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("CUDA_VISIBLE_DEVICES", std::to_string(gpu).c_str(), 1);
    if (gpu == 0) vime::bench::nccl_as_separate_host("vime-bench-receiver");
    const std::string port_s = std::to_string(port);
    ::execl(self.c_str(), self.c_str(), "receiver", "--port", port_s.c_str(), "--model",
            model.c_str(), nullptr);
    ::_exit(127);
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/health";
  for (int i = 0; i < 1200; ++i) {
    if (vime::http::fetch(vime::http::Request::get(url, 2)).ok()) return pid;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) throw vime::Error("the receiver process exited");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGKILL);
  throw vime::Error("the receiver did not answer /health within 120 s");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The raw floor: the packed plan's chunk sizes, broadcast from one preallocated buffer.
double raw_broadcast_seconds(NcclWeightSender& sender, const std::string& url,
                             const std::vector<TensorMeta>& metas, int64_t buffer_bytes) {
  Json chunks = Json::array();
  int64_t largest = 0;
  for (const auto& c : plan_packed_chunks(metas, buffer_bytes)) {
    chunks.push_back(c.nbytes);
    largest = std::max(largest, c.nbytes);
  }
  auto* comm = sender.communicator();
  auto buffer = at::ones({largest}, at::TensorOptions().dtype(at::kByte).device(comm->device()));
  Json body = Json::object();
  body["chunks"] = chunks;
  comm->wait("raw setup", 60);
  const auto start = Clock::now();
  ConcurrentPosts posts({vime::http::Request::post_json(url + "/raw_broadcast", body, 600)},
                        "POST /raw_broadcast");
  for (const auto& n : chunks.as_array()) comm->broadcast(buffer.narrow(0, 0, n.as_int()), 0, true);
  comm->wait("raw broadcast", 600, [&posts] { return posts.first_failure(); });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  posts.join_and_check();
  return seconds;
}

// The packing alone (each multi-tensor chunk copied into one buffer), no broadcast: what a serial
// sender adds to the wire time, and what the pipelined one hides behind it.
double pack_seconds(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                    const std::vector<TensorMeta>& metas, int64_t buffer_bytes, int rounds) {
  const auto chunks = plan_packed_chunks(metas, buffer_bytes);
  const at::Device device = tensors.front().second.device();
  const c10::Stream stream(c10::Stream::DEFAULT, device);
  int64_t largest = 0;  // a chunk can pass the buffer size by its last tensor
  for (const auto& c : chunks) largest = std::max(largest, c.nbytes);
  auto buffer = at::empty({largest}, at::TensorOptions().dtype(at::kByte).device(device));
  std::vector<double> times;
  for (int r = 0; r <= rounds; ++r) {
    stream.synchronize();
    const auto start = Clock::now();
    for (const auto& c : chunks) {
      if (c.end - c.begin > 1) pack_chunk(tensors, c, buffer.narrow(0, 0, c.nbytes));
    }
    stream.synchronize();
    if (r > 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(times);
}

int run_bench(int argc, char** argv) {
  std::vector<std::string> models;
  std::stringstream list(flag(argc, argv, "--models", "qwen3-0.6b,qwen3-4b"));
  for (std::string m; std::getline(list, m, ',');) models.push_back(m);
  const int rounds = std::stoi(flag(argc, argv, "--rounds", "5"));
  const int gpu = std::stoi(flag(argc, argv, "--receiver-gpu", "1"));
  const int64_t buffer_bytes = std::stoll(flag(argc, argv, "--buffer-bytes", "1073741824"));
  const bool tcp = has_flag(argc, argv, "--tcp-store");
  const std::string self = "/proc/self/exe";
  char exe[4096] = {};
  const ssize_t n = ::readlink(self.c_str(), exe, sizeof(exe) - 1);
  const std::string program = n > 0 ? std::string(exe, n) : std::string(argv[0]);
  const at::Device device("cuda:0");
  if (gpu == 0) vime::bench::nccl_as_separate_host("vime-bench-trainer");
  for (const auto& model_name : models) {
    const int port = vime::http::free_port(vime::weight_sync::kAnyAddress);
    const pid_t pid = start_receiver(program, model_name, gpu, port);
    struct Reap {  // a failed case must not leave the receiver holding the output pipe
      pid_t pid;
      ~Reap() {
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
      }
    } reap{pid};
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    vime::Model model(vime::presets::by_name(model_name), at::kBFloat16, device, 1);
    const auto tensors = model.hf_tensors();
    std::vector<TensorMeta> metas;
    for (const auto& [name, t] : tensors) {
      metas.push_back({name, dtype_name(t.scalar_type()), t.sizes().vec()});
    }
    const double pack_s = pack_seconds(tensors, metas, buffer_bytes, rounds);
    for (const std::string mode : {"packed", "packed_serial", "unpacked"}) {
      const bool packed = mode != "unpacked";
      NcclSenderOptions options;
      options.device = device;
      options.packed = packed;
      options.pipeline_packing = mode == "packed";
      options.packed_buffer_size_bytes = buffer_bytes;
      options.use_unique_id = !tcp;
      NcclWeightSender sender;
      const auto connect_start = Clock::now();
      sender.connect({url}, options);
      const double connect_s = std::chrono::duration<double>(Clock::now() - connect_start).count();
      std::vector<double> update_s, broadcast_s, raw_s;
      SendStats stats;
      for (int r = 0; r <= rounds; ++r) {  // round 0 warms up
        stats = sender.send(tensors, std::to_string(r));
        if (r > 0)
          update_s.push_back(stats.seconds), broadcast_s.push_back(stats.broadcast_seconds);
        const double raw = raw_broadcast_seconds(sender, url, metas, buffer_bytes);
        if (r > 0) raw_s.push_back(raw);
      }
      const Json remote = vime::http::fetch_json(
          vime::http::Request::get(url + "/weight_checksums", 600), "checksums");
      const bool equal = remote.at("checksums") == vime::bench::weight_checksums(tensors);
      Json line = Json::object();
      line["model"] = model_name;
      line["mode"] = mode;
      line["rendezvous"] = tcp ? "tcp_store" : "unique_id";
      line["transport"] = gpu == 0 ? "socket (one GPU)" : "gpu to gpu";
      line["tensors"] = stats.tensors;
      line["bytes"] = stats.bytes;
      line["rounds"] = rounds;
      line["connect_s"] = connect_s;
      line["update_s"] = median(update_s);
      line["update_gbps"] = double(stats.bytes) / median(update_s) / 1e9;
      line["broadcast_s"] = median(broadcast_s);
      line["raw_broadcast_s"] = median(raw_s);
      line["raw_gbps"] = double(stats.bytes) / median(raw_s) / 1e9;
      line["update_over_raw"] = median(update_s) / median(raw_s);
      line["pack_s"] = pack_s;  // the copies alone, for reading a serial vs pipelined sender
      line["weights_equal"] = equal;
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
    }
    vime::http::fetch(vime::http::Request::post_json(url + "/shutdown", Json::object(), 10));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "receiver") return run_receiver(argc, argv);
    if (mode == "bench") return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weight_transfer_bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: weight_transfer_bench bench|receiver [flags] (see the source)\n");
  return 2;
}
