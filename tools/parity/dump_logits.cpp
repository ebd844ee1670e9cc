// Writes a model's logits for packed sequences, for tools/parity/hf_parity.py (and
// tools/parity/lora_parity.py, which passes a PEFT adapter dir: applied as adapters, not merged):
//   vime_dump_logits MODEL_DIR TOKENS.safetensors OUT.safetensors float32|bfloat16 cpu|cuda [TP
//       [ADAPTER_DIR]]
// TOKENS holds "tokens" [total] int64 and "cu_seqlens" [num_seqs + 1] int64; OUT gets "logits"
// [total, vocab] fp32. TP > 1: TP local ranks (vime's launcher; one GPU each on CUDA) hold the
// model's tensor-parallel shards, and rank 0 writes the gathered logits.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>

#include "vime/ckpt/checkpoint.hpp"
#include "vime/ckpt/peft_adapter.hpp"
#include "vime/ckpt/safetensors.hpp"
#include "vime/dist/local_launcher.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_device.hpp"
#include "vime/error.hpp"

int main(int argc, char** argv) {
  if (argc < 6 || argc > 8) {
    std::fprintf(
        stderr,
        "usage: %s MODEL_DIR TOKENS.safetensors OUT.safetensors DTYPE DEVICE [TP [ADAPTER_DIR]]\n",
        argv[0]);
    return 2;
  }
  try {
    const int tp = argc >= 7 ? std::stoi(argv[6]) : 1;
    const vime::Args no_flags;
    auto env = vime::dist::rank_env_from_environment(no_flags);
    if (tp > 1 && env.is_single()) {
      vime::dist::LocalLaunchPlan plan;
      plan.gpus_per_node = tp;
      plan.argv.assign(argv, argv + argc);
      plan.program = "vime_dump_logits";
      return vime::dist::launch_local_ranks(plan, std::cout);
    }
    at::Device device(argv[5]);
    std::unique_ptr<vime::dist::ProcessGroup> group;
    if (!env.is_single()) {
      if (device.is_cuda()) device = vime::dist::bind_rank_device(env);
      group = vime::dist::ProcessGroup::create(env, device, std::chrono::minutes(5));
    }
    auto resolved = vime::ckpt::resolve_checkpoint(argv[1]);
    if (!resolved) throw vime::Error(std::string(argv[1]) + ": no model there");
    const bool is_bf16 = std::string(argv[4]) == "bfloat16";
    auto model = vime::ckpt::load_model(*resolved, is_bf16 ? at::kBFloat16 : at::kFloat, device,
                                        vime::TensorParallel::over(group.get()));
    if (argc == 8) vime::ckpt::apply_peft_adapter(argv[7], *model);
    vime::ckpt::SafetensorsFile input(argv[2]);
    auto tokens = input.get("tokens");
    auto cu = input.get("cu_seqlens");
    std::vector<std::vector<int64_t>> sequences;
    for (int64_t i = 0; i + 1 < cu.numel(); ++i) {
      auto s = tokens.slice(0, cu[i].item<int64_t>(), cu[i + 1].item<int64_t>()).contiguous();
      sequences.emplace_back(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + s.numel());
    }
    at::NoGradGuard no_grad;
    auto logits = model->forward(vime::PackedBatch::pack(sequences, device));
    if (!group || group->rank() == 0) {
      vime::ckpt::write_safetensors(argv[3], {{"logits", logits.to(at::kFloat).to(at::kCPU)}});
    }
    // NCCL's wait() only orders streams: a rank that left now would tear its communicator down
    // under a gather still running on the others' GPUs (rank 0 then read garbage). Every rank
    // waits until all are done.
    if (group) group->barrier();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vime_dump_logits: %s\n", e.what());
    return 1;
  }
}
