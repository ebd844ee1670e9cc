// What vime writes for other tools, read by a reader that shares no code with vime
// (tools/parity/torch_logits.py under Debian's python3-torch): the HF directory `vime convert-hf`
// and `vime train --save-hf` write (write_hf_directory, config.json from the origin) and the one
// vime writes alone (save_hf_model, config.json generated) give the logits vime computes.
// Weights are perturbed first, so nothing passes by copying the origin's files.
#include "support/outside_reader.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>

#include "support/skip.hpp"
#include "support/test_support.hpp"
#include "vime/ckpt/hf_export.hpp"
#include "vime/ckpt/model_io.hpp"

namespace fs = std::filesystem;

TEST_CASE("an HF directory vime writes gives vime's logits to an outside reader", "[ckpt]") {
  if (const auto missing = vime::test::outside_reader_missing(); !missing.empty())
    VIME_SKIP(missing);
  // Tied embeddings and q/k norms; qkv biases, untied head; Llama 3 rope scaling.
  const std::string name = GENERATE("tiny_qwen3", "tiny_qwen2", "tiny_llama");
  CAPTURE(name);
  const fs::path origin = fs::path(VIME_SOURCE_DIR "/tests/model/golden") / name;
  auto model = vime::ckpt::load_hf_model(origin, at::kFloat, at::kCPU);
  at::NoGradGuard no_grad;
  at::manual_seed(7);
  for (auto& [param, t] : model->named_parameters()) t.add_(at::randn_like(t) * 0.05);
  const std::vector<std::vector<int64_t>> seqs{{1, 5, 9, 17, 33}, {2, 4, 8, 16, 32, 64, 95, 3, 7}};
  const int64_t vocab = model->config().vocab_size;
  const auto expected =
      model->forward(vime::PackedBatch::pack(seqs, at::kCPU)).narrow(-1, 0, vocab);

  vime::test::TempDir dir;
  vime::ckpt::write_hf_directory(*model, dir.path() / "exported", origin);
  vime::ckpt::save_hf_model(*model, dir.path() / "generated");
  for (const char* written : {"exported", "generated"}) {
    CAPTURE(written);
    const auto got = vime::test::outside_reader_logits(dir.path() / written, seqs);
    REQUIRE(got.sizes() == expected.sizes());
    // fp32, the same math in another order: ~1e-6 at logits of a few units.
    CHECK((got - expected).abs().max().item<double>() < 1e-4);
  }
}
