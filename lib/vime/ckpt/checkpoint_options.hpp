// The checkpoint flags of a run (--save, --save-interval, --load, --ref-load, ...), read once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::ckpt {

struct CheckpointOptions {
  std::optional<std::string> save;       // --save
  std::optional<int64_t> save_interval;  // --save-interval
  std::optional<std::string> load;       // --load
  std::optional<int64_t> ckpt_step;      // --ckpt-step
  bool finetune = false;                 // --finetune
  bool no_load_optim = false;            // --no-load-optim
  bool no_load_rng = false;              // --no-load-rng
  std::optional<std::string> ref_load;   // --ref-load
  std::optional<int64_t> ref_ckpt_step;  // --ref-ckpt-step

  static CheckpointOptions from(const Args& args);
};

}  // namespace vime::ckpt
