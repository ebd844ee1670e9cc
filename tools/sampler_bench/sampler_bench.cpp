// sampler_bench: milliseconds per sampling step of engine::sample_tokens on [batch, vocab] logits,
// for greedy, plain temperature and top-k + top-p rows, against the floor every sampler pays (an
// fp32 log_softmax and an argmax over the same logits), timed in the same run. One JSON line per
// (batch, case) with the ratio to that baseline.
//
//   build/bin/sampler_bench [--vocab 151936] [--iters 20] [--threads 1] [--dtype float|bfloat16]
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "vime/engine/sampler.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_per_call(const std::function<void()>& fn, int iters) {
  fn();  // warm-up
  const auto start = Clock::now();
  for (int i = 0; i < iters; ++i) fn();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / iters;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t vocab = 151936;
  int iters = 20, threads = 1;
  std::string dtype_name = "float";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--vocab"))
      vocab = std::stoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters"))
      iters = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dtype"))
      dtype_name = argv[i + 1];
    else {
      std::fprintf(stderr, "sampler_bench: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  at::set_num_threads(threads);
  const auto dtype = dtype_name == "bfloat16" ? at::kBFloat16 : at::kFloat;
  using vime::engine::RowSampling;
  struct Case {
    const char* name;
    double temperature;
    int64_t top_k;
    double top_p;
  };
  const Case cases[] = {{"greedy", 0.0, 0, 1.0},
                        {"temperature", 1.0, 0, 1.0},
                        {"top_k50_top_p0.9", 0.7, 50, 0.9},
                        {"top_p0.9", 0.7, 0, 0.9}};
  for (int64_t batch : {1, 16, 64}) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
    auto logits =
        (at::randn({batch, vocab}, gen, at::TensorOptions().dtype(at::kFloat)) * 3).to(dtype);
    const double baseline = ms_per_call(
        [&] {
          auto lp = at::log_softmax(logits.to(at::kFloat), 1);
          auto t = lp.argmax(1);
          (void)t.data_ptr<int64_t>();
        },
        iters);
    for (const Case& c : cases) {
      std::vector<RowSampling> settings(batch);
      std::vector<vime::engine::SamplerRow> rows;
      for (int64_t r = 0; r < batch; ++r) {
        settings[r].temperature = c.temperature;
        settings[r].top_k = c.top_k;
        settings[r].top_p = c.top_p;
        settings[r].seed = static_cast<uint64_t>(r);
        rows.push_back({&settings[r], 0});
      }
      int64_t step = 0;
      const double ms = ms_per_call(
          [&] {
            for (auto& row : rows) row.num_generated = step;
            ++step;
            vime::engine::sample_tokens(logits, rows);
          },
          iters);
      std::printf(
          "{\"batch\":%lld,\"vocab\":%lld,\"dtype\":\"%s\",\"threads\":%d,\"case\":\"%s\","
          "\"ms_per_step\":%.3f,\"baseline_ms\":%.3f,\"ratio_to_baseline\":%.2f}\n",
          static_cast<long long>(batch), static_cast<long long>(vocab), dtype_name.c_str(), threads,
          c.name, ms, baseline, ms / baseline);
    }
  }
  return 0;
}
