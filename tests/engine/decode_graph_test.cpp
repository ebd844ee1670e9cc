// The fixed-shape decode step on the CPU: the batch buckets and the staging layout (padding rows,
// slots, block tables), the ATen reference of the paged decode attention against the gather path,
// DecodeGraphRunner's eager step against the full forward, and the engine with fixed-shape decode
// against its varlen path. The CUDA kernel and the graphs: decode_graph_gpu_test.cpp.
#include "vime/engine/decode_graph.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <future>

#include "engine/engine_fixtures.hpp"
#include "vime/engine/decode_batch.hpp"
#include "vime/engine/native_engine.hpp"
#include "vime/error.hpp"
#include "vime/model/paged_decode.hpp"
#include "vime/model/paged_decode_kernel.hpp"
#include "vime/model/paged_forward.hpp"

using vime::engine::DecodeRow;
using vime::engine::DecodeStaging;

TEST_CASE("decode buckets: powers of two to 8, then multiples of 16, then the batch",
          "[engine][decode_graph]") {
  using vime::engine::bucket_for;
  using vime::engine::decode_buckets;
  CHECK(decode_buckets(1) == std::vector<int64_t>{1});
  CHECK(decode_buckets(6) == std::vector<int64_t>{1, 2, 4, 6});
  CHECK(decode_buckets(40) == std::vector<int64_t>{1, 2, 4, 8, 16, 32, 40});
  const auto b = decode_buckets(256);
  CHECK(b.size() == 4 + 15 + 1);
  CHECK(b.back() == 256);
  CHECK(bucket_for(b, 1) == 1);
  CHECK(bucket_for(b, 3) == 4);
  CHECK(bucket_for(b, 9) == 16);
  CHECK(bucket_for(b, 17) == 32);
  CHECK(bucket_for(b, 250) == 256);
  CHECK(bucket_for(b, 257) == -1);
}

TEST_CASE("decode staging packs rows, padding rows and block tables", "[engine][decode_graph]") {
  const DecodeStaging staging(4, 3, 16);
  CHECK(staging.size() == 4 * 4 + 4 * 3);
  CHECK(staging.used(2) == 16 + 6);
  const std::vector<int32_t> table_a{7, 2}, table_b{5}, too_long{1, 2, 3, 4};
  const std::vector<DecodeRow> rows{{101, 16, table_a}, {102, 3, table_b}};
  CHECK(staging.fits(rows[0]));
  CHECK_FALSE(staging.fits({1, 32, table_a}));  // position beyond its table
  CHECK_FALSE(staging.fits({1, 0, too_long}));  // table beyond max_blocks
  std::vector<int32_t> out(staging.size(), 99);
  staging.fill(rows, 3, out.data());
  CHECK(std::vector<int32_t>(out.begin(), out.begin() + 3) == std::vector<int32_t>{101, 102, 0});
  CHECK(std::vector<int32_t>(out.begin() + 4, out.begin() + 7) == std::vector<int32_t>{16, 3, 0});
  // slot = table[p / 16] * 16 + p % 16; the padding row writes nowhere
  CHECK(std::vector<int32_t>(out.begin() + 8, out.begin() + 11) ==
        std::vector<int32_t>{2 * 16 + 0, 5 * 16 + 3, -1});
  CHECK(std::vector<int32_t>(out.begin() + 12, out.begin() + 15) == std::vector<int32_t>{17, 4, 0});
  CHECK(std::vector<int32_t>(out.begin() + 16, out.begin() + 25) ==
        std::vector<int32_t>{7, 2, 0, 5, 0, 0, 0, 0, 0});
  CHECK(out[25] == 99);  // beyond used(3): untouched
  CHECK_THROWS_AS(staging.fill(rows, 5, out.data()), vime::Error);
  const std::vector<DecodeRow> bad{{1, 40, table_a}};
  CHECK_THROWS_AS(staging.fill(bad, 1, out.data()), vime::Error);
}

namespace {

// Random caches of `blocks` blocks and per-row block tables drawn from a permutation, so rows
// read scattered blocks.
struct PagedCase {
  at::Tensor q, keys, values, tables, lens;
};

PagedCase make_case(const at::TensorOptions& options, int64_t heads, int64_t kv_heads,
                    int64_t head_dim, int64_t block_size, const std::vector<int32_t>& lens,
                    int64_t max_blocks) {
  const int64_t batch = static_cast<int64_t>(lens.size()), blocks = batch * max_blocks + 3;
  at::manual_seed(5);
  PagedCase c;
  c.q = at::randn({batch, heads, head_dim}, options.dtype(at::kFloat)).to(options.dtype());
  c.keys = at::randn({blocks, block_size, kv_heads, head_dim}, options.dtype(at::kFloat))
               .to(options.dtype());
  c.values = at::randn_like(c.keys, options.dtype(at::kFloat)).to(options.dtype());
  auto perm = at::randperm(blocks, at::TensorOptions().dtype(at::kLong)).to(at::kInt);
  c.tables = perm.narrow(0, 0, batch * max_blocks).view({batch, max_blocks}).to(options.device());
  c.lens = at::tensor(lens, at::TensorOptions().dtype(at::kInt)).to(options.device());
  return c;
}

// The engine's gather path (paged_attention) for one new token per row.
at::Tensor gather_attention(const PagedCase& c, double scale) {
  const int64_t batch = c.q.size(0), block_size = c.keys.size(1);
  vime::PagedAttentionInfo info;
  auto lens = c.lens.to(at::kCPU);
  auto tables = c.tables.to(at::kCPU);
  std::vector<int64_t> slots, cu_k{0};
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = lens[b].item<int64_t>();
    info.cu_seqlens_q.push_back(b);
    info.seqlens_k.push_back(n);
    for (int64_t p = 0; p < n; ++p)
      slots.push_back(tables[b][p / block_size].item<int64_t>() * block_size + p % block_size);
    cu_k.push_back(cu_k.back() + n);
    info.max_seqlen_k = std::max(info.max_seqlen_k, n);
  }
  info.cu_seqlens_q.push_back(batch);
  info.max_seqlen_q = 1;
  auto device = c.q.device();
  auto int32 = [&](const std::vector<int64_t>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(at::kInt).to(device);
  };
  info.cu_seqlens_q_device = int32(info.cu_seqlens_q);
  info.cu_seqlens_k_device = int32(cu_k);
  info.block_tables = c.tables;
  info.gather_slots = at::tensor(slots, at::TensorOptions().dtype(at::kLong)).to(device);
  return vime::paged_attention(c.q, c.keys, c.values, info, scale,
                               vime::PagedAttentionPath::kGather);
}

}  // namespace

TEST_CASE("the paged decode reference equals the gather path (GQA, block boundaries)",
          "[engine][decode_graph]") {
  const std::vector<int32_t> lens{1, 15, 16, 17, 33, 64};
  for (int64_t groups : {1, 2, 4}) {
    const auto c = make_case(at::TensorOptions().dtype(at::kFloat), 2 * groups, 2, 16, 16, lens, 4);
    const double scale = 0.25;
    auto ref =
        vime::paged_decode_attention_reference(c.q, c.keys, c.values, c.tables, c.lens, scale);
    auto gather = gather_attention(c, scale);
    CHECK((ref - gather).abs().max().item<double>() < 1e-5);
    CHECK((vime::paged_decode_attention(c.q, c.keys, c.values, c.tables, c.lens, scale) - ref)
              .abs()
              .max()
              .item<double>() == 0.0);  // no kernel on the CPU: the reference itself
  }
  // A padding row (length 0) gives zeros, not NaN.
  const auto c = make_case(at::TensorOptions().dtype(at::kFloat), 4, 2, 16, 16, {5, 0}, 2);
  auto out = vime::paged_decode_attention_reference(c.q, c.keys, c.values, c.tables, c.lens, 0.25);
  CHECK(out[1].abs().max().item<double>() == 0.0);
  CHECK(out[0].abs().max().item<double>() > 0.0);
}

TEST_CASE("write_paged_kv writes rows to their slots and skips padding rows",
          "[engine][decode_graph]") {
  auto keys = at::zeros({3, 4, 2, 8}), values = at::zeros({3, 4, 2, 8});
  auto k = at::randn({3, 2, 8}), v = at::randn({3, 2, 8});
  auto slots = at::tensor(std::vector<int32_t>{5, -1, 11});
  vime::write_paged_kv(keys, values, k, v, slots);
  auto flat_k = keys.view({12, 2, 8}), flat_v = values.view({12, 2, 8});
  CHECK(at::equal(flat_k[5], k[0]));
  CHECK(at::equal(flat_k[11], k[2]));
  CHECK(at::equal(flat_v[11], v[2]));
  CHECK(flat_k.abs().sum().item<double>() ==
        Approx(k[0].abs().sum().item<double>() + k[2].abs().sum().item<double>()));
}

TEST_CASE("DecodeGraphRunner's eager step gives the full forward's logits",
          "[engine][decode_graph]") {
  auto model = vime::test::tiny_engine_model(at::kFloat, at::kCPU, 256, 3);
  at::NoGradGuard no_grad;
  const int64_t block_size = 4;
  vime::PagedKvCache cache(model->config(), at::kFloat, at::kCPU, block_size);
  cache.resize(32);
  // Three sequences prefilled through the varlen path, in scattered blocks.
  std::vector<std::vector<int32_t>> sequences{
      {11, 12, 13, 14, 15, 16, 17}, {21, 22, 23, 24}, {31, 32, 33, 34, 35}};
  std::vector<std::vector<int32_t>> tables{{9, 3, 20, 4}, {1, 30, 2}, {7, 8, 6, 5}};
  std::vector<vime::PagedSequence> prefill;
  for (size_t i = 0; i < sequences.size(); ++i)
    prefill.push_back(
        {sequences[i], 0, static_cast<int64_t>(sequences[i].size()), &tables[i], true});
  (void)vime::paged_forward(*model, cache, prefill);
  vime::engine::DecodeGraphRunner runner(*model, cache, 8, 4, /*graphs=*/true);
  for (int step = 0; step < 5; ++step) {  // crosses block boundaries (4, 8)
    std::vector<DecodeRow> rows;
    for (size_t i = 0; i < sequences.size(); ++i) {
      sequences[i].push_back(100 + 13 * step + static_cast<int32_t>(i));
      const int64_t position = static_cast<int64_t>(sequences[i].size()) - 1;
      if (position / block_size < static_cast<int64_t>(tables[i].size()))
        rows.push_back({sequences[i].back(), position, tables[i]});
    }
    REQUIRE(runner.accepts(rows));
    auto logits = runner.run(rows);
    REQUIRE(logits.size(0) == static_cast<int64_t>(rows.size()));
    for (size_t r = 0; r < rows.size(); ++r) {
      size_t i = 0;
      while (sequences[i].back() != rows[r].token) ++i;
      std::vector<int64_t> full(sequences[i].begin(), sequences[i].end());
      auto expected = model->forward(vime::PackedBatch::pack({full}, at::kCPU))[-1];
      CHECK((logits[static_cast<int64_t>(r)] - expected).abs().max().item<double>() < 1e-4);
    }
  }
  CHECK(runner.graphs_captured() == 0);  // no graphs on the CPU
  const std::vector<int32_t> short_table{1};
  CHECK_FALSE(runner.accepts(std::vector<DecodeRow>{{1, 4, short_table}}));
}

TEST_CASE("the engine's fixed-shape decode gives the varlen path's greedy output",
          "[engine][decode_graph]") {
  auto model = vime::test::tiny_engine_model(at::kFloat, at::kCPU, 512, 7);
  std::vector<vime::GenerateRequest> requests;
  for (int i = 0; i < 5; ++i) {
    std::vector<int32_t> p;
    for (int t = 0; t < 3 + 9 * i; ++t) p.push_back((1000 + 7919 * (i * 31 + t)) % 150000);
    requests.push_back(vime::test::make_request(p, 24 + 3 * i));
  }
  auto run = [&](bool fixed) {
    vime::engine::NativeEngineOptions options;
    options.kv_block_size = 8;
    options.max_running_requests = 6;
    options.fixed_shape_decode = fixed;
    vime::engine::NativeEngine engine(*model, nullptr, options);
    std::vector<std::future<vime::GenerateResponse>> futures;
    for (const auto& r : requests) futures.push_back(engine.submit(r, {}));
    std::vector<std::vector<int32_t>> out;
    for (auto& f : futures) out.push_back(f.get().output_ids);
    return out;
  };
  const auto varlen = run(false), fixed = run(true);
  for (size_t i = 0; i < requests.size(); ++i) CHECK(fixed[i] == varlen[i]);
}

TEST_CASE("split-K splits a decode launch only where its CTAs leave SMs idle", "[engine]") {
  using vime::cuda_kernels::choose_decode_splits;
  // 132 SMs (an H100): ~528 CTAs wanted.
  CHECK(choose_decode_splits(256, 8, 640, 132) == 1);  // 2048 CTAs: unsplit
  CHECK(choose_decode_splits(64, 8, 4096, 132) == 1);  // 512 CTAs: nearly there
  CHECK(choose_decode_splits(16, 8, 2304, 132) == 4);  // 128 CTAs: 4 ranges of 576
  CHECK(choose_decode_splits(16, 8, 300, 132) == 2);   // the length allows 2 ranges of 256
  CHECK(choose_decode_splits(16, 8, 256, 132) == 1);
  CHECK(choose_decode_splits(1, 2, 100000, 132) == vime::cuda_kernels::kMaxDecodeSplits);
  CHECK(choose_decode_splits(0, 8, 4096, 132) == 1);
}
