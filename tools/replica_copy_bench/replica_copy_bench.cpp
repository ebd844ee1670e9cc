// The trainer -> engine replica weight copy of `vime train --rollout-num-gpus K` (no --colocate):
// a random-init Qwen3-shaped model on the trainer's device (cuda:0, else the CPU) copied into a
// replica on the next device (cuda:1, else a second CPU copy) through
// weight_sync::copy_weights_packed at several bucket sizes, against the same bytes moved raw: one
// copy per tensor (copy_weights_raw) and one flat buffer copied whole (the floor: one transfer of
// every byte, no packing). One JSON line per (model, mode, bucket) with the best of --rounds:
//   replica_copy_bench [--models qwen3-0.6b,qwen3-4b] [--rounds 5] [--dtype bf16|fp32]
//                      [--buckets 67108864,536870912,1073741824] [--src cuda:0] [--dst cuda:1]
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "common/model_presets.hpp"
#include "vime/error.hpp"
#include "vime/model/model.hpp"
#include "vime/weight_sync/device_weight_copy.hpp"

namespace {

using namespace vime::weight_sync;

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t gpu_count() {
  if (!at::hasCUDA()) return 0;
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->deviceCount();
}

void line(const std::string& model, const std::string& mode, int64_t bucket, int64_t bytes,
          int64_t transfers, double seconds, double floor_s, const c10::Device& src,
          const c10::Device& dst) {
  std::printf(
      "{\"model\": \"%s\", \"mode\": \"%s\", \"bucket_bytes\": %lld, \"bytes\": %lld, "
      "\"transfers\": %lld, \"seconds\": %.6f, \"gb_per_s\": %.3f, \"over_flat_copy\": %.3f, "
      "\"src\": \"%s\", \"dst\": \"%s\"}\n",
      model.c_str(), mode.c_str(), static_cast<long long>(bucket), static_cast<long long>(bytes),
      static_cast<long long>(transfers), seconds, static_cast<double>(bytes) / seconds / 1e9,
      floor_s > 0 ? seconds / floor_s : 0.0, src.str().c_str(), dst.str().c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  const int64_t gpus = gpu_count();
  const c10::Device src(flag(argc, argv, "--src", gpus >= 1 ? "cuda:0" : "cpu"));
  const c10::Device dst(
      flag(argc, argv, "--dst", gpus >= 2 ? "cuda:1" : (gpus == 1 ? "cuda:0" : "cpu")));
  const int rounds = std::stoi(flag(argc, argv, "--rounds", "5"));
  const auto dtype = flag(argc, argv, "--dtype", "bf16") == "fp32" ? at::kFloat : at::kBFloat16;
  if (gpus >= 2) {
    std::fprintf(stderr, "replica_copy_bench: %s -> %s (peer access: ask nvidia-smi topo -m)\n",
                 src.str().c_str(), dst.str().c_str());
  }
  at::NoGradGuard no_grad;
  for (const auto& name : split(flag(argc, argv, "--models", "qwen3-0.6b"))) {
    const auto config = vime::presets::by_name(name);
    vime::Model trainer(config, dtype, src, 1);
    vime::Model replica(config, dtype, dst, 2);
    trainer.set_requires_grad(false);
    replica.set_requires_grad(false);
    const auto& a = trainer.named_parameters();
    const auto& b = replica.named_parameters();
    int64_t bytes = 0;
    for (const auto& [n, t] : a) bytes += t.numel() * static_cast<int64_t>(t.element_size());
    // The floor: every byte in one flat buffer, copied whole once.
    auto flat_src = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(src));
    auto flat_dst = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(dst));
    double floor_s = 1e30;
    for (int r = 0; r < rounds + 1; ++r) {
      const double t0 = now_s();
      flat_dst.copy_(flat_src);
      synchronize_device(src);
      synchronize_device(dst);
      if (r > 0) floor_s = std::min(floor_s, now_s() - t0);  // round 0 warms up
    }
    line(name, "flat_copy", bytes, bytes, 1, floor_s, floor_s, src, dst);
    double raw_s = 1e30;
    int64_t raw_n = 0;
    for (int r = 0; r < rounds + 1; ++r) {
      auto s = copy_weights_raw(a, b);
      if (r > 0) raw_s = std::min(raw_s, s.seconds);
      raw_n = s.buckets;
    }
    line(name, "raw_per_tensor", 0, bytes, raw_n, raw_s, floor_s, src, dst);
    for (const auto& bucket_text :
         split(flag(argc, argv, "--buckets", "67108864,536870912,1073741824"))) {
      const int64_t bucket = std::stoll(bucket_text);
      double best = 1e30;
      int64_t n = 0;
      for (int r = 0; r < rounds + 1; ++r) {
        auto s = copy_weights_packed(a, b, bucket);
        if (r > 0) best = std::min(best, s.seconds);
        n = s.buckets;
      }
      line(name, "packed", bucket, bytes, n, best, floor_s, src, dst);
    }
    // The copy is exact.
    for (size_t i = 0; i < a.size(); ++i) {
      if (!at::equal(a[i].second.to(at::kCPU), b[i].second.to(at::kCPU)))
        throw vime::Error("replica_copy_bench: " + a[i].first + " differs after the copy");
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "replica_copy_bench: %s\n", e.what());
  return 1;
}
