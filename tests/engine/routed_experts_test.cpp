// The engine's record of each token's routed experts (--use-rollout-routing-replay) on a micro
// Qwen3-MoE on the CPU: the rows of prompt and output equal an uncached full forward's routing,
// through chunked prefill, the fixed-shape decode runner, preemption and a prompt another request
// cached (whose prefix the request recomputes); and routed_experts on the wire (.npy, raw int32,
// lists). On the GPU machine: decode steps replayed from CUDA graphs record what eager steps
// record.
#include "vime/engine/routed_experts.hpp"

#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <future>

#include "engine/engine_fixtures.hpp"
#include "support/micro_moe.hpp"
#include "support/skip.hpp"
#include "vime/core/base64.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"

using vime::engine::decode_routed_experts;
using vime::engine::encode_routed_experts_npy;
using vime::engine::NativeEngine;
using vime::engine::NativeEngineOptions;

namespace {

// The fraction of positions whose every layer's experts equal the reference's (a near-tie of
// router logits may resolve differently between the paged and the full forward's numerics).
double matching_rows(const std::vector<int32_t>& got, const std::vector<int32_t>& want,
                     int64_t width) {
  REQUIRE(got.size() == want.size());
  const auto rows = static_cast<int64_t>(got.size()) / width;
  int64_t same = 0;
  for (int64_t r = 0; r < rows; ++r)
    same += std::equal(got.begin() + r * width, got.begin() + (r + 1) * width,
                       want.begin() + r * width);
  return static_cast<double>(same) / static_cast<double>(rows);
}

vime::GenerateRequest routed_request(std::vector<int32_t> prompt, int64_t new_tokens,
                                     int64_t seed) {
  auto r = vime::test::make_request(std::move(prompt), new_tokens, 1.0, seed);
  r.return_routed_experts = true;
  return r;
}

}  // namespace

TEST_CASE("engine: routed experts of prompt and output equal a full forward's", "[engine]") {
  // Layer 0 dense: its entries are 0, as SGLang leaves them.
  vime::Model model(vime::test::micro_qwen3_moe(8, 2, {0}), at::kFloat, at::kCPU, 11);
  const int64_t width = 2 * 2;  // layers x top-k
  const std::vector<int32_t> prompt{3, 9, 27, 1, 14, 33, 5, 8, 21, 2, 17, 30};

  auto check = [&](NativeEngineOptions options, const char* what) {
    INFO(what);
    NativeEngine engine(model, nullptr, options);
    const auto r = engine.generate(routed_request(prompt, 10, 5));
    REQUIRE(r.output_ids.size() == 10);
    std::vector<int32_t> sequence = prompt;
    sequence.insert(sequence.end(), r.output_ids.begin(), r.output_ids.end());
    // No row for the last output token: it was never fed back.
    REQUIRE(static_cast<int64_t>(r.routed_experts.size()) ==
            static_cast<int64_t>(sequence.size() - 1) * width);
    sequence.pop_back();
    const auto want = vime::test::full_forward_routing(model, sequence);
    CHECK(matching_rows(r.routed_experts, want, width) >= 0.95);
    for (size_t i = 0; i < r.routed_experts.size(); i += width) {
      CHECK(r.routed_experts[i] == 0);  // the dense layer
      CHECK(r.routed_experts[i + 1] == 0);
      CHECK(r.routed_experts[i + 2] != r.routed_experts[i + 3]);
    }
    // Without asking, none.
    auto plain = routed_request(prompt, 4, 5);
    plain.return_routed_experts = false;
    CHECK(engine.generate(plain).routed_experts.empty());
    return r;
  };
  NativeEngineOptions whole;
  const auto reference = check(whole, "one prefill");
  NativeEngineOptions chunked;
  chunked.max_prefill_tokens = 5;
  CHECK(check(chunked, "prefill in chunks of 5").routed_experts == reference.routed_experts);
  NativeEngineOptions fixed;
  fixed.fixed_shape_decode = true;  // the decode runner's static buffer (graphs on CUDA)
  CHECK(check(fixed, "fixed-shape decode").routed_experts == reference.routed_experts);

  // A prompt another request put in the prefix cache: recomputed, so that it has its routing.
  NativeEngineOptions small_blocks;
  small_blocks.kv_block_size = 4;
  NativeEngine engine(model, nullptr, small_blocks);
  auto unrouted = routed_request(prompt, 3, 5);
  unrouted.return_routed_experts = false;
  CHECK(engine.generate(unrouted).cached_tokens == 0);
  CHECK(engine.generate(unrouted).cached_tokens > 0);  // the cache holds the prompt
  const auto again = engine.generate(routed_request(prompt, 10, 5));
  CHECK(again.cached_tokens == 0);
  CHECK(again.output_ids == reference.output_ids);
  CHECK(again.routed_experts == reference.routed_experts);
}

TEST_CASE("engine: preempted requests keep the routing of every position", "[engine]") {
  vime::Model model(vime::test::micro_qwen3_moe(), at::kFloat, at::kCPU, 13);
  std::vector<vime::GenerateRequest> requests;
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> prompt;
    for (int t = 0; t < 6 + 3 * i; ++t) prompt.push_back((11 * i + 5 * t + 2) % 40);
    requests.push_back(routed_request(prompt, 30, 40 + i));
  }
  std::vector<vime::GenerateResponse> alone;
  {
    NativeEngine roomy(model, nullptr, {});
    for (const auto& r : requests) alone.push_back(roomy.generate(r));
  }
  NativeEngineOptions tight;
  tight.kv_block_size = 4;
  tight.max_context_len = 64;  // 16 blocks: one request always fits
  tight.kv_cache_blocks = 20;  // the four need up to 4 x 14 blocks
  NativeEngine engine(model, nullptr, tight);
  engine.pause();  // submitted together: they compete for the blocks
  std::vector<std::future<vime::GenerateResponse>> pending;
  for (const auto& r : requests) pending.push_back(engine.submit(r, {}));
  engine.resume();
  for (size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    const auto r = pending[i].get();
    CHECK(r.output_ids == alone[i].output_ids);
    CHECK(r.routed_experts == alone[i].routed_experts);
  }
  CHECK(engine.stats().preempted >= 1);
}

TEST_CASE("engine: a dense model returns no routed experts", "[engine]") {
  vime::Model model(vime::presets::micro_qwen3(), at::kFloat, at::kCPU, 11);
  NativeEngine engine(model, nullptr, {});
  CHECK(engine.generate(routed_request({1, 2, 3}, 3, 1)).routed_experts.empty());
}

TEST_CASE("routed_experts on the wire: .npy, raw int32 and lists", "[engine]") {
  const std::vector<int32_t> ids{0, 7, 3, 1, 6, 2, -1, 5, 4, 2, 0, 65537};
  const auto text = encode_routed_experts_npy(ids, 2, 2);  // 3 rows x 2 layers x top-2
  const auto bytes = vime::base64_decode(text, "test");
  CHECK(bytes.compare(0, 6, "\x93NUMPY") == 0);
  CHECK(bytes.find("'shape': (3, 2, 2)") != std::string::npos);
  CHECK((bytes.size() - 4 * ids.size()) % 64 == 0);  // the data is 64-byte aligned
  CHECK(decode_routed_experts(vime::Json(text), "t") == ids);
  // SGLang's raw little-endian int32 and plain lists (nested or flat).
  std::string raw;
  for (int32_t id : ids) raw.append(reinterpret_cast<const char*>(&id), 4);
  CHECK(decode_routed_experts(vime::Json(vime::base64_encode(raw)), "t") == ids);
  CHECK(decode_routed_experts(vime::Json::parse("[[[1, 2]], [[3, 4]]]"), "t") ==
        std::vector<int32_t>{1, 2, 3, 4});
  CHECK(decode_routed_experts(vime::Json(), "t").empty());
  // numpy's int16 .npy as np.save writes it.
  std::string header = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy.push_back(static_cast<char>(header.size()));
  npy.push_back('\0');
  npy += header + std::string("\x05\x00\xff\xff", 4);
  CHECK(decode_routed_experts(vime::Json(vime::base64_encode(npy)), "t") ==
        std::vector<int32_t>{5, -1});
  CHECK_THROWS_WITH(decode_routed_experts(vime::Json("AAAA!"), "engine 0"),
                    Catch::Contains("engine 0"));
  CHECK_THROWS_WITH(decode_routed_experts(vime::Json(vime::base64_encode("abc")), "e"),
                    Catch::Contains("int32"));
  CHECK_THROWS_WITH(decode_routed_experts(vime::Json::parse("[1, \"x\"]"), "e"),
                    Catch::Contains("routed_experts"));
}

TEST_CASE("engine: decode CUDA graphs record routed experts as eager decode does",
          "[gpu][engine_gpu]") {
  VIME_SKIP_WITHOUT_CUDA();
  vime::Model model(vime::test::micro_qwen3_moe(8, 2, {0}), at::kBFloat16, at::kCUDA, 11);
  auto run = [&](bool graphs) {
    NativeEngineOptions options;
    options.cuda_graphs = graphs;
    NativeEngine engine(model, nullptr, options);
    engine.pause();  // submitted together: decode rows padded to a bucket
    std::vector<std::future<vime::GenerateResponse>> pending;
    for (int i = 0; i < 5; ++i) {
      std::vector<int32_t> prompt;
      for (int t = 0; t < 4 + 3 * i; ++t) prompt.push_back((7 * i + 3 * t + 1) % 40);
      pending.push_back(engine.submit(routed_request(prompt, 12, 20 + i), {}));
    }
    engine.resume();
    std::vector<vime::GenerateResponse> out;
    for (auto& f : pending) out.push_back(f.get());
    return std::make_pair(out, engine.stats().cuda_graphs);
  };
  const auto [graphed, captured] = run(true);
  const auto [eager, none] = run(false);
  CHECK(captured > 0);
  CHECK(none == 0);
  for (size_t i = 0; i < graphed.size(); ++i) {
    CHECK(graphed[i].output_ids == eager[i].output_ids);
    CHECK(graphed[i].routed_experts == eager[i].routed_experts);
    REQUIRE(graphed[i].routed_experts.size() == (4 + 3 * i + 12 - 1) * 4);
  }
}
