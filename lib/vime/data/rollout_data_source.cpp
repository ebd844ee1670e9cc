#include "vime/data/rollout_data_source.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "vime/args.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::data {
namespace {

int64_t oldest_weight_version(const SampleGroup& group) {
  int64_t oldest = std::numeric_limits<int64_t>::max();  // "inf": no numeric version
  for (const Sample& sample : group) {
    for (const std::string& version : sample.weight_versions) {
      std::string_view digits = version;
      if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
      if (digits.empty() ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      try {
        oldest = std::min<int64_t>(oldest, std::stoll(version));
      } catch (const std::out_of_range&) {
      }
    }
  }
  return oldest;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int64_t state_int(const Json& state, std::string_view key, const std::string& where) {
  const Json* v = state.find(key);
  if (v == nullptr || v->is_null()) return 0;  // slime: state_dict.get(key, 0)
  if (!v->is_int() || v->as_int() < 0)
    throw UsageError(where + ": '" + std::string(key) + "' must be a non-negative integer, got " +
                     v->dump());
  return v->as_int();
}

}  // namespace

std::vector<SampleGroup> pop_first(std::optional<int64_t>, std::vector<SampleGroup>& buffer,
                                   int64_t num_groups) {
  const auto count = static_cast<ptrdiff_t>(
      std::min<int64_t>(static_cast<int64_t>(buffer.size()), std::max<int64_t>(num_groups, 0)));
  std::vector<SampleGroup> taken(std::make_move_iterator(buffer.begin()),
                                 std::make_move_iterator(buffer.begin() + count));
  buffer.erase(buffer.begin(), buffer.begin() + count);
  return taken;
}

std::vector<SampleGroup> pop_oldest(std::optional<int64_t> rollout_id,
                                    std::vector<SampleGroup>& buffer, int64_t num_groups) {
  std::stable_sort(buffer.begin(), buffer.end(), [](const SampleGroup& a, const SampleGroup& b) {
    return oldest_weight_version(a) < oldest_weight_version(b);
  });
  return pop_first(rollout_id, buffer, num_groups);
}

RolloutDataSource::RolloutDataSource(std::shared_ptr<PromptDataset> dataset,
                                     DataSourceOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (options_.n_samples_per_prompt < 1)
    throw UsageError("--n-samples-per-prompt must be at least 1, got " +
                     std::to_string(options_.n_samples_per_prompt));
  if (!options_.buffer_filter) options_.buffer_filter = pop_first;
  if (dataset_ && options_.shuffle) dataset_->shuffle(epoch_id_);
}

std::unique_ptr<RolloutDataSource> RolloutDataSource::from(const Args& args,
                                                           PromptRenderer renderer,
                                                           TokenCounter count_tokens) {
  return from_options(args, DataOptions::from(args), std::move(renderer), std::move(count_tokens));
}

std::unique_ptr<RolloutDataSource> RolloutDataSource::from_options(const Args& args,
                                                                   const DataOptions& data,
                                                                   PromptRenderer renderer,
                                                                   TokenCounter count_tokens) {
  std::shared_ptr<PromptDataset> dataset;
  if (data.prompt_data) {
    dataset = std::make_shared<PromptDataset>(*data.prompt_data, data.dataset, std::move(renderer),
                                              std::move(count_tokens));
  }
  DataSourceOptions options;
  options.n_samples_per_prompt = data.n_samples_per_prompt;
  options.shuffle = data.shuffle;
  if (data.save) options.save_dir = *data.save;
  if (data.load) options.load_dir = *data.load;
  if (data.buffer_filter_path) {
    auto fn = plugin::load_plugin<PluginKind::kBufferFilter>(
        *data.buffer_filter_path, "--buffer-filter-path", "buffer_filter");
    options.buffer_filter = [fn, args](std::optional<int64_t> rollout_id,
                                       std::vector<SampleGroup>& buffer, int64_t num_groups) {
      return fn(args, rollout_id, buffer, num_groups);
    };
  } else if (data.buffer_sort_by_staleness) {
    options.buffer_filter = pop_oldest;
  }
  return std::make_unique<RolloutDataSource>(std::move(dataset), std::move(options));
}

std::vector<SampleGroup> RolloutDataSource::get_samples(int64_t num_groups) {
  if (num_groups < 0)
    throw Error("get_samples: the number of groups must be >= 0, got " +
                std::to_string(num_groups));
  std::vector<SampleGroup> groups;
  if (!buffer_.empty() && num_groups > 0)
    groups = options_.buffer_filter(std::nullopt, buffer_, num_groups);
  if (static_cast<int64_t>(groups.size()) > num_groups)
    throw Error("the buffer filter returned " + std::to_string(groups.size()) +
                " groups, more than the " + std::to_string(num_groups) + " asked for");
  std::vector<SampleGroup> fresh =
      take_from_dataset(num_groups - static_cast<int64_t>(groups.size()));
  groups.insert(groups.end(), std::make_move_iterator(fresh.begin()),
                std::make_move_iterator(fresh.end()));
  return groups;
}

void RolloutDataSource::start_epoch(int64_t epoch) {
  epoch_id_ = epoch;
  sample_offset_ = 0;
  if (options_.shuffle) dataset_->shuffle(epoch_id_);
}

std::vector<SampleGroup> RolloutDataSource::take_from_dataset(int64_t num_groups) {
  std::vector<Sample> prompts;
  prompts.reserve(static_cast<size_t>(num_groups));
  if (dataset_ == nullptr) {
    prompts.resize(static_cast<size_t>(num_groups));
  } else if (num_groups > 0) {
    const auto size = static_cast<int64_t>(dataset_->size());
    if (size == 0)
      throw UsageError(dataset_->path() + ": cannot draw " + std::to_string(num_groups) +
                       " prompt groups from an empty dataset");
    if (sample_offset_ > size)
      throw Error("invalid dataset offset " + std::to_string(sample_offset_) + " for " +
                  dataset_->path() + " with " + std::to_string(size) +
                  " prompts (was the state saved for another dataset?)");
    int64_t remaining = num_groups;
    while (remaining > 0) {
      if (sample_offset_ == size) start_epoch(epoch_id_ + 1);
      const int64_t take = std::min(remaining, size - sample_offset_);
      for (int64_t i = 0; i < take; ++i)
        prompts.push_back(dataset_->at(static_cast<size_t>(sample_offset_ + i)));
      sample_offset_ += take;
      remaining -= take;
    }
  }

  std::vector<SampleGroup> groups;
  groups.reserve(prompts.size());
  for (const Sample& prompt : prompts) {
    SampleGroup group;
    group.reserve(static_cast<size_t>(options_.n_samples_per_prompt));
    for (int64_t i = 0; i < options_.n_samples_per_prompt; ++i) {
      Sample sample = prompt;
      sample.group_index = sample_group_index_;
      sample.index = sample_index_++;
      group.push_back(std::move(sample));
    }
    ++sample_group_index_;
    groups.push_back(std::move(group));
  }
  return groups;
}

void RolloutDataSource::add_samples(std::vector<SampleGroup> groups) {
  for (size_t i = 0; i < groups.size(); ++i) {
    if (static_cast<int64_t>(groups[i].size()) != options_.n_samples_per_prompt)
      throw Error("add_samples: group " + std::to_string(i) + " has " +
                  std::to_string(groups[i].size()) + " samples, but --n-samples-per-prompt is " +
                  std::to_string(options_.n_samples_per_prompt));
  }
  for (SampleGroup& group : groups) buffer_.push_back(std::move(group));
}

int64_t RolloutDataSource::size() const {
  return dataset_ ? static_cast<int64_t>(dataset_->size()) : 0;
}

Json RolloutDataSource::state_dict() const {
  Json state = Json::object();
  state["sample_offset"] = sample_offset_;
  state["epoch_id"] = epoch_id_;
  state["sample_group_index"] = sample_group_index_;
  state["sample_index"] = sample_index_;
  state["metadata"] = metadata_;
  Json buffer = Json::array();
  for (const SampleGroup& group : buffer_) {
    Json samples = Json::array();
    for (const Sample& sample : group) samples.push_back(sample.to_json());
    buffer.push_back(std::move(samples));
  }
  state["buffer"] = std::move(buffer);
  if (dataset_) state["num_prompts"] = static_cast<int64_t>(dataset_->size());
  return state;
}

void RolloutDataSource::load_state_dict(const Json& state, const std::string& where) {
  if (!state.is_object()) throw UsageError(where + ": not a JSON object");
  const int64_t offset = state_int(state, "sample_offset", where);
  if (dataset_) {
    const Json* saved_size = state.find("num_prompts");
    const auto size = static_cast<int64_t>(dataset_->size());
    if ((saved_size && saved_size->is_int() && saved_size->as_int() != size) || offset > size)
      throw UsageError(where + ": saved for a dataset of " +
                       (saved_size ? saved_size->dump() : std::string("?")) +
                       " prompts at offset " + std::to_string(offset) + ", but " +
                       dataset_->path() + " has " + std::to_string(size) +
                       "; resume with the same --prompt-data and --rollout-max-prompt-len");
  }
  std::vector<SampleGroup> buffer;
  if (const Json* saved = state.find("buffer"); saved && !saved->is_null()) {
    if (!saved->is_array()) throw UsageError(where + ": 'buffer' must be a list of groups");
    for (const Json& group : saved->as_array()) {
      if (!group.is_array()) throw UsageError(where + ": each buffer group must be a list");
      SampleGroup samples;
      for (const Json& sample : group.as_array()) samples.push_back(Sample::from_json(sample));
      buffer.push_back(std::move(samples));
    }
  }
  Json metadata = Json::object();
  if (const Json* saved = state.find("metadata"); saved && saved->is_object()) metadata = *saved;

  sample_offset_ = offset;
  epoch_id_ = state_int(state, "epoch_id", where);
  sample_group_index_ = state_int(state, "sample_group_index", where);
  sample_index_ = state_int(state, "sample_index", where);
  metadata_ = std::move(metadata);
  buffer_ = std::move(buffer);
  if (dataset_ && options_.shuffle) dataset_->shuffle(epoch_id_);
}

std::filesystem::path RolloutDataSource::state_path(const std::filesystem::path& dir,
                                                    int64_t rollout_id) {
  return dir / "rollout" / ("global_dataset_state_dict_" + std::to_string(rollout_id) + ".json");
}

void RolloutDataSource::save(int64_t rollout_id) {
  if (!options_.save_dir)
    throw UsageError("saving the data-source state needs --save (a checkpoint directory)");
  const auto path = state_path(*options_.save_dir, rollout_id);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw Error("cannot create " + path.parent_path().string() + ": " + ec.message());
  write_text_file_atomic(path, state_dict().dump(1) + "\n");
}

void RolloutDataSource::load(std::optional<int64_t> rollout_id) {
  if (!options_.load_dir) return;
  if (!rollout_id) {
    const auto tracker = *options_.load_dir / "latest_checkpointed_iteration.txt";
    std::error_code ec;
    if (!std::filesystem::exists(tracker, ec)) return;
    const std::string text = read_text(tracker);
    try {
      rollout_id = std::stoll(text);
    } catch (const std::exception&) {
      throw UsageError(tracker.string() + ": expected an iteration number, got '" + text + "'");
    }
  }
  const auto path = state_path(*options_.load_dir, *rollout_id);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    std::cerr << "vime: data-source state " << path.string()
              << " does not exist; starting from the first prompt\n";
    return;
  }
  load_state_dict(Json::parse(read_text(path), path.string()), path.string());
}

int64_t resolve_num_rollout(const DataOptions& options, int64_t num_prompts_per_epoch) {
  if (options.num_rollout) return *options.num_rollout;
  const auto num_epoch = options.num_epoch;
  if (!num_epoch) throw UsageError("one of --num-rollout and --num-epoch is required");
  if (!options.rollout_batch_size) throw UsageError("--num-epoch needs --rollout-batch-size");
  const int64_t batch = *options.rollout_batch_size;
  const int64_t per_epoch = batch > 0 ? num_prompts_per_epoch / batch : 0;
  if (per_epoch == 0)
    throw UsageError("--num-epoch " + std::to_string(*num_epoch) + ": one epoch has " +
                     std::to_string(num_prompts_per_epoch) +
                     " prompts, fewer than --rollout-batch-size " + std::to_string(batch) +
                     "; use --num-rollout or a smaller --rollout-batch-size");
  return per_epoch * *num_epoch;
}

}  // namespace vime::data
