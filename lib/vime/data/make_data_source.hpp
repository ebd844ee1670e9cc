// The data source of a run: the --data-source-path plugin when set, else the built-in
// RolloutDataSource (slime's RolloutDataSourceWithBuffer).
#pragma once

#include <memory>

#include "vime/args.hpp"
#include "vime/data/prompt_dataset.hpp"
#include "vime/rollout_types.hpp"

namespace vime::data {

// A plugin's data source keeps its .so loaded for as long as it lives. Throws UsageError naming
// --data-source-path when the plugin cannot be loaded or returns no data source.
std::unique_ptr<DataSource> make_data_source(const Args& args, PromptRenderer renderer = {},
                                             TokenCounter count_tokens = {});

}  // namespace vime::data
