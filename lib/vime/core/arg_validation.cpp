#include "vime/core/arg_validation.hpp"

#include <filesystem>
#include <regex>

#include "vime/core/arg_parser.hpp"
#include "vime/core/args_lookup.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/python_format.hpp"

namespace vime::core {
namespace {

namespace fs = std::filesystem;

bool on(const Args& a, std::string_view key) { return flag_on(a, key); }
bool set(const Args& a, std::string_view key) { return flag_set(a, key); }
double num(const Args& a, std::string_view key, double fallback = 0.0) {
  return set(a, key) ? a.get_double(key) : fallback;
}
std::string str(const Args& a, std::string_view key) {
  return set(a, key) ? a.get_string(key) : std::string();
}

void derive(Args& a, std::string_view key, Json value) {
  a.set(key, std::move(value), ArgSource::kDerived);
}

bool is_megatron_checkpoint(const std::string& dir) {
  if (dir.empty()) return false;
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "latest_checkpointed_iteration.txt", ec)) return true;
  static const std::regex kIterDir(R"(iter_\d{7})");
  return std::regex_match(fs::path(dir).filename().string(), kIterDir) && fs::is_directory(dir, ec);
}

bool is_hf_dir(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::exists(fs::path(dir) / "config.json", ec);
}

// The Llama 3 RoPE scaling factor the model is built with: --use-rope-scaling's
// --rope-scaling-factor, else config.json's rope_scaling of --hf-checkpoint, else 1.
double rope_scaling_applied(const Args& a) {
  if (on(a, "use_rope_scaling")) return num(a, "rope_scaling_factor", 1.0);
  const std::string dir = str(a, "hf_checkpoint");
  if (!is_hf_dir(dir)) return 1.0;
  try {
    const Json config = Json::parse(read_text_file(fs::path(dir) / "config.json"), dir);
    if (!config.contains("rope_scaling") || !config.at("rope_scaling").is_object()) return 1.0;
    const Json& rope = config.at("rope_scaling");
    const Json& type = rope.contains("rope_type") ? rope.at("rope_type") : rope.at("type");
    if (!type.is_string() || type.as_string() != "llama3" || !rope.contains("factor")) return 1.0;
    return rope.at("factor").as_double();
  } catch (const std::exception&) {
    return 1.0;  // an unreadable config.json is reported where the model is loaded
  }
}

// A PEFT adapter (a LoRA run starts from it on the --ref-load base).
bool is_peft_adapter_dir(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::exists(fs::path(dir) / "adapter_config.json", ec);
}

}  // namespace

std::string strip_row_slice(const std::string& path) {
  static const std::regex kSlice(R"(^(.*)@\[(-?\d*):(-?\d*)\]$)");
  std::smatch m;
  if (std::regex_match(path, m, kSlice)) return m[1].str();
  return path;
}

namespace {

// The problems found so far; all of them are reported together, on one line.
struct Problems {
  std::vector<std::string> list;
  void add(std::string message) { list.push_back(std::move(message)); }
  void require(bool ok, const std::string& message) {
    if (!ok) add(message);
  }
  void throw_if_any() const {
    if (list.empty()) return;
    std::string message;
    for (const auto& p : list) message += (message.empty() ? "" : "; ") + p;
    throw UsageError(message);
  }
};

// What vime cannot run yet, and inputs that are not on this machine.
void check_supported_and_present(const Args& a, const ValidationOptions& options, Problems& p) {
  for (auto& s : unsupported_settings(a)) p.add(s + " is not supported yet");
  if (options.check_paths) {
    auto must_exist = [&](std::string_view key) {
      if (!set(a, key)) return;
      std::string path = strip_row_slice(a.get_string(key));
      std::error_code ec;
      if (!fs::exists(path, ec)) p.add(a.flag_name(key) + " " + path + " does not exist");
    };
    for (auto key : {"hf_checkpoint", "prompt_data", "ref_load", "eval_config", "opd_teacher_load",
                     "vllm_config", "megatron_config_path"}) {
      must_exist(key);
    }
    if (set(a, "eval_prompt_data")) {
      auto values = a.get_string_list("eval_prompt_data");
      for (size_t i = values.size() == 1 ? 0 : 1; i < values.size(); i += 2) {
        std::string path = strip_row_slice(values[i]);
        std::error_code ec;
        if (!fs::exists(path, ec)) p.add("--eval-prompt-data " + path + " does not exist");
      }
    }
  }
}

// Derived values, in slime_validate_args' order; returns warnings.
std::vector<std::string> derive_values(Args& a) {
  std::vector<std::string> warnings;
  if (on(a, "offload")) {
    derive(a, "offload_train", true);
    derive(a, "offload_rollout", true);
  }
  const std::string estimator = str(a, "advantage_estimator");
  if (estimator == "ppo") derive(a, "use_critic", true);
  if (on(a, "use_critic")) derive(a, "offload_train", true);
  for (auto key : {"offload_train", "offload_rollout"}) {
    if (a.has(key) && a.get(key).is_null()) derive(a, key, on(a, "colocate"));
  }
  if (on(a, "colocate") && !set(a, "rollout_num_gpus")) {
    derive(a, "rollout_num_gpus",
           a.get_int("actor_num_nodes") * a.get_int("actor_num_gpus_per_node"));
  }
  if (set(a, "load_debug_rollout_data")) derive(a, "debug_train_only", true);
  if (!set(a, "eps_clip_high")) derive(a, "eps_clip_high", a.get_double("eps_clip"));
  if (estimator == "cispo" && a.get_double("eps_clip") < 1.0) {
    warnings.push_back(
        "--advantage-estimator cispo usually runs with --eps-clip 1 (and --eps-clip-high ~4); "
        "got " +
        std::to_string(a.get_double("eps_clip")));
  }
  if (set(a, "eval_prompt_data")) {
    auto values = a.get_string_list("eval_prompt_data");
    if (values.size() == 1)
      derive(a, "eval_prompt_data", Json(std::vector<std::string>{"aime", values[0]}));
  }
  if (!set(a, "ref_load") && set(a, "hf_checkpoint")) {
    // vime accepts an HF directory wherever a checkpoint is: the reference defaults to the starting
    // model.
    derive(a, "ref_load", a.get("hf_checkpoint"));
  }
  const std::string load = str(a, "load");
  if (!is_megatron_checkpoint(load)) {
    derive(a, "no_load_optim", true);
    derive(a, "no_load_rng", true);
    derive(a, "finetune", true);
    if (!is_hf_dir(load) && !is_peft_adapter_dir(load)) derive(a, "load", a.get("ref_load"));
    if (a.has("ref_ckpt_step")) derive(a, "ckpt_step", a.get("ref_ckpt_step"));
    derive(a, "start_rollout_id", 0);
  }
  if (set(a, "max_tokens_per_gpu") && !set(a, "log_probs_max_tokens_per_gpu")) {
    derive(a, "log_probs_max_tokens_per_gpu", a.get("max_tokens_per_gpu"));
  }
  if (set(a, "rollout_max_context_len") && !set(a, "rollout_max_prompt_len")) {
    derive(a, "rollout_max_prompt_len", a.get_int("rollout_max_context_len") - 1);
  }
  if (on(a, "balance_by_flops")) derive(a, "balance_data", true);
  if (set(a, "update_weight_delta_dir") && !set(a, "update_weight_disk_dir")) {
    derive(a, "update_weight_disk_dir", a.get("update_weight_delta_dir"));
  }
  return warnings;
}

// Batch sizes, counted in samples as slime does: required flags and the derived batch sizes.
void derive_batch_sizes(Args& a, Problems& p) {
  p.require(set(a, "rollout_batch_size"), "--rollout-batch-size is required");
  p.require(set(a, "num_rollout") || set(a, "num_epoch"),
            "one of --num-rollout and --num-epoch is required");
  if (set(a, "rollout_batch_size")) {
    const int64_t rbs = a.get_int("rollout_batch_size");
    const int64_t n = a.get_int("n_samples_per_prompt");
    p.require(rbs > 0, "--rollout-batch-size must be > 0");
    p.require(n > 0, "--n-samples-per-prompt must be > 0");
    if (!set(a, "over_sampling_batch_size")) derive(a, "over_sampling_batch_size", rbs);
    p.require(a.get_int("over_sampling_batch_size") >= rbs,
              "--over-sampling-batch-size " +
                  std::to_string(a.get_int("over_sampling_batch_size")) +
                  " must be >= --rollout-batch-size " + std::to_string(rbs));
    if (set(a, "num_steps_per_rollout")) {
      const int64_t steps = a.get_int("num_steps_per_rollout");
      p.require(steps > 0 && (rbs * n) % steps == 0,
                "--num-steps-per-rollout " + std::to_string(steps) +
                    " must divide rollout-batch-size x n-samples-per-prompt = " +
                    std::to_string(rbs * n));
      if (steps > 0) derive(a, "global_batch_size", rbs * n / steps);
    }
    if (!set(a, "global_batch_size")) derive(a, "global_batch_size", rbs * n);
    const int64_t gbs = a.get_int("global_batch_size");
    p.require(
        gbs > 0 && (rbs * n) % gbs == 0,
        "--global-batch-size " + std::to_string(gbs) +
            " must divide rollout-batch-size x n-samples-per-prompt = " + std::to_string(rbs * n));
    if (n == 1) {
      derive(a, "grpo_std_normalization", false);
    }
  }
}

// Flags that mean something only with another: refused alone rather than ignored.
void check_flag_dependencies(const Args& a, Problems& p) {
  if (set(a, "update_weight_delta_dir") && set(a, "update_weight_disk_dir")) {
    p.require(str(a, "update_weight_delta_dir") == str(a, "update_weight_disk_dir"),
              "--update-weight-delta-dir and --update-weight-disk-dir must agree (the first is the "
              "second's deprecated spelling)");
  }
  p.require(!on(a, "debug_train_only") || set(a, "load_debug_rollout_data"),
            "--debug-train-only needs --load-debug-rollout-data (the rollouts to train on)");
  p.require(on(a, "compute_advantages_and_returns") || str(a, "loss_type") != "policy_loss",
            "--disable-compute-advantages-and-returns needs --loss-type sft_loss or custom_loss "
            "(the policy loss reads the advantages)");
  p.require(!on(a, "get_mismatch_metrics") || set(a, "custom_tis_function_path"),
            "--get-mismatch-metrics needs --custom-tis-function-path (a TIS plugin, or slime's mis "
            "function: examples.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp)");
  p.require(
      !set(a, "custom_tis_function_path") || on(a, "use_tis") || on(a, "get_mismatch_metrics"),
      "--custom-tis-function-path needs --use-tis or --get-mismatch-metrics (slime calls the "
      "TIS function only then)");
  if (set(a, "ref_update_interval"))
    p.require(a.get_int("ref_update_interval") > 0, "--ref-update-interval must be > 0");
  p.require(!set(a, "save_hf") || set(a, "save"),
            "--save-hf needs --save (the HF copy is written at each save)");
}

// slime's rules between flags.
void check_slime_rules(const Args& a, Problems& p) {
  const std::string estimator = str(a, "advantage_estimator");
  p.require(a.get_double("rollout_temperature") > 0, "--rollout-temperature must be > 0");
  if (num(a, "kl_coef") != 0.0 || on(a, "use_kl_loss")) {
    p.require(
        set(a, "ref_load"),
        "--kl-coef / --use-kl-loss need a reference model: set --ref-load (or --hf-checkpoint)");
  }
  p.require(!(num(a, "kl_coef") != 0.0 && num(a, "kl_loss_coef") != 0.0),
            "--kl-coef and --kl-loss-coef cannot both be non-zero");
  if (on(a, "use_opd")) {
    p.require(set(a, "opd_type"), "--use-opd needs --opd-type");
    if (str(a, "opd_type") == "megatron")
      p.require(set(a, "opd_teacher_load"), "--opd-type megatron needs --opd-teacher-load");
    if (str(a, "opd_type") == "sglang" || str(a, "opd_type") == "vllm") {
      p.require(!set(a, "opd_teacher_load"),
                "--opd-type " + str(a, "opd_type") + " takes no --opd-teacher-load");
    } else {
      p.require(!set(a, "opd_teacher_model"),
                "--opd-teacher-model is the served teacher of --opd-type vllm (or sglang); "
                "--opd-type megatron takes --opd-teacher-load");
    }
    if (set(a, "opd_teacher_model")) {
      const std::string teacher = str(a, "opd_teacher_model");
      p.require(teacher.starts_with("http://") || teacher.starts_with("https://") ||
                    set(a, "vllm_config"),
                "--opd-teacher-model " + teacher +
                    " names a model of --vllm-config: set --vllm-config (with --rollout-backend "
                    "vllm), or give the teacher's URL (http://host:port)");
    }
  } else {
    p.require(!set(a, "opd_teacher_load"), "--opd-teacher-load needs --use-opd");
    p.require(!set(a, "opd_teacher_model"), "--opd-teacher-model needs --use-opd");
  }
  p.require(!set(a, "eval_interval") || set(a, "eval_prompt_data") || set(a, "eval_config") ||
                set(a, "dataset"),
            "--eval-interval needs eval datasets: --eval-prompt-data, --eval-config or --dataset");
  p.require(!set(a, "save_interval") || set(a, "save"), "--save-interval needs --save");
  if (estimator == "reinforce_plus_plus" || estimator == "reinforce_plus_plus_baseline") {
    p.require(on(a, "normalize_advantages"),
              "--advantage-estimator " + estimator + " needs --normalize-advantages");
  }
  p.require(!(on(a, "use_rollout_logprobs") && on(a, "use_tis")),
            "--use-rollout-logprobs and --use-tis cannot be used together");
  p.require(!on(a, "use_dynamic_batch_size") || set(a, "max_tokens_per_gpu"),
            "--use-dynamic-batch-size needs --max-tokens-per-gpu");
  p.require(!on(a, "balance_by_flops") || on(a, "use_dynamic_batch_size"),
            "--balance-by-flops needs --use-dynamic-batch-size");
  p.require(!(on(a, "debug_rollout_only") && on(a, "debug_train_only")),
            "--debug-rollout-only and --debug-train-only cannot be used together");
  p.require(!set(a, "num_epoch") || on(a, "rollout_global_dataset"),
            "--num-epoch needs the global dataset (drop --disable-rollout-global-dataset)");
  p.require(!(set(a, "only_train_params_name_list") && set(a, "freeze_params_name_list")),
            "--only-train-params-name-list and --freeze-params-name-list cannot be used together");
  if (str(a, "update_weight_transport") == "disk") {
    p.require(set(a, "update_weight_disk_dir"),
              "--update-weight-transport disk needs --update-weight-disk-dir");
  }
  if (str(a, "update_weight_mode") == "delta") {
    p.require(str(a, "update_weight_transport") == "disk",
              "--update-weight-mode delta needs --update-weight-transport disk");
    p.require(!on(a, "colocate"), "--update-weight-mode delta cannot be used with --colocate");
    p.require(set(a, "update_weight_local_checkpoint_dir"),
              "--update-weight-mode delta needs --update-weight-local-checkpoint-dir");
  }
  if (set(a, "eps_clip_c")) p.require(a.get_double("eps_clip_c") > 1.0, "--eps-clip-c must be > 1");
  check_flag_dependencies(a, p);
}

// Model and optimizer settings vime would build differently: refused rather than approximated.
void check_model_support(const Args& a, Problems& p) {
  // vime's model supports RMSNorm only; an explicit LayerNorm would silently train another model.
  if (a.has("normalization") && a.source("normalization") != ArgSource::kDefault) {
    p.require(str(a, "normalization") == "RMSNorm",
              "--normalization " + str(a, "normalization") + " is not supported yet");
  }
  // Model flags describe the architecture to build; vime builds decoder-only Llama/Qwen models, so
  // an architecture it would build differently is refused rather than approximated. The HF
  // config.json of
  // --hf-checkpoint is the other source of truth, checked against these flags where the model is
  // built.
  if (set(a, "num_layers")) {
    p.require(on(a, "swiglu"),
              "model flags without --swiglu describe a GELU MLP, which is not supported yet");
    p.require(
        on(a, "use_rotary_position_embeddings") || str(a, "position_embedding_type") == "rope",
        "--position-embedding-type " + str(a, "position_embedding_type") +
            " is not supported yet (vime uses rotary embeddings: "
            "--use-rotary-position-embeddings)");
  }
  // Flags vime accepts for slime's scripts although it has nothing they would change, at the
  // values that change nothing; a value that would change the result is refused by name.
  for (const char* key : {"attention_dropout", "hidden_dropout"}) {
    if (a.has(key) && a.source(key) != ArgSource::kDefault && num(a, key) > 0) {
      p.add(a.flag_name(key) + " " + python_float_repr(num(a, key)) +
            " is not supported: vime trains without dropout (pass 0.0, as slime's scripts do)");
    }
  }
  // Under --multi-latent-attention the factor is YaRN's (ModelConfig reads it and checks it
  // against config.json's rope_scaling).
  const bool mla = on(a, "multi_latent_attention");
  if (!mla && a.has("rotary_scaling_factor") &&
      a.source("rotary_scaling_factor") != ArgSource::kDefault &&
      num(a, "rotary_scaling_factor", 1.0) != 1.0) {
    const double factor = num(a, "rotary_scaling_factor", 1.0);
    const double applied = rope_scaling_applied(a);
    p.require(factor == applied,
              "--rotary-scaling-factor " + python_float_repr(factor) +
                  " differs from the RoPE scaling vime applies (" + python_float_repr(applied) +
                  ", from --use-rope-scaling --rope-scaling-factor or config.json's "
                  "rope_scaling); pass the same factor to both, as slime's Llama 3 presets do");
  }
  if (set(a, "rope_type")) {
    p.require(str(a, "rope_type") == "rope" || (mla && str(a, "rope_type") == "yarn"),
              "--rope-type " + str(a, "rope_type") +
                  " is not supported yet (yarn only with --multi-latent-attention)");
  }
  p.require(str(a, "optimizer") == "adam",
            "--optimizer " + str(a, "optimizer") + " is not supported yet (use adam)");
  if (set(a, "recompute_granularity")) {
    p.require(str(a, "recompute_granularity") == "full", "--recompute-granularity " +
                                                             str(a, "recompute_granularity") +
                                                             " is not supported yet (use full)");
  }
}

}  // namespace

std::vector<std::string> validate_args(Args& a, const ValidationOptions& options) {
  Problems problems;
  check_supported_and_present(a, options, problems);
  problems.throw_if_any();
  auto warnings = derive_values(a);
  derive_batch_sizes(a, problems);
  check_slime_rules(a, problems);
  check_model_support(a, problems);
  problems.throw_if_any();
  return warnings;
}

}  // namespace vime::core
