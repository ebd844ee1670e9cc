#include "vime/data/data_options.hpp"

namespace vime::data {

DatasetOptions DatasetOptions::from(const Args& args) {
  DatasetOptions o;
  o.input_key = args.get_string("input_key");
  o.label_key = args.get_optional_string("label_key");
  o.metadata_key = args.get_string("metadata_key");
  o.tool_key = args.get_optional_string("tool_key");
  o.apply_chat_template = args.get_bool("apply_chat_template");
  if (args.is_set("apply_chat_template_kwargs"))
    o.apply_chat_template_kwargs = args.get("apply_chat_template_kwargs");
  o.max_prompt_tokens = args.get_optional_int("rollout_max_prompt_len");
  o.seed = args.get_int("rollout_seed");
  return o;
}

DataOptions DataOptions::from(const Args& args) {
  DataOptions o;
  o.data_source_path = args.get_optional_string("data_source_path");
  if (args.get_bool("rollout_global_dataset"))
    o.prompt_data = args.get_optional_string("prompt_data");
  o.dataset = DatasetOptions::from(args);
  o.n_samples_per_prompt = args.get_int("n_samples_per_prompt");
  o.shuffle = args.get_bool("rollout_shuffle");
  o.save = args.get_optional_string("save");
  o.load = args.get_optional_string("load");
  o.buffer_filter_path = args.get_optional_string("buffer_filter_path");
  o.buffer_sort_by_staleness =
      args.has("buffer_sort_by_staleness") && args.get_bool("buffer_sort_by_staleness");
  o.num_rollout = args.get_optional_int("num_rollout");
  o.num_epoch = args.get_optional_int("num_epoch");
  o.rollout_batch_size = args.get_optional_int("rollout_batch_size");
  return o;
}

}  // namespace vime::data
