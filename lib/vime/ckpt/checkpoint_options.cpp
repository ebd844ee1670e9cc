#include "vime/ckpt/checkpoint_options.hpp"

namespace vime::ckpt {

CheckpointOptions CheckpointOptions::from(const Args& args) {
  CheckpointOptions o;
  o.save = args.get_optional_string("save");
  o.save_interval = args.get_optional_int("save_interval");
  o.load = args.get_optional_string("load");
  o.ckpt_step = args.get_optional_int("ckpt_step");
  o.finetune = args.get_bool("finetune");
  o.no_load_optim = args.get_bool("no_load_optim");
  o.no_load_rng = args.get_bool("no_load_rng");
  o.ref_load = args.get_optional_string("ref_load");
  o.ref_ckpt_step = args.get_optional_int("ref_ckpt_step");
  return o;
}

}  // namespace vime::ckpt
