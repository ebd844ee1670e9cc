#include "vime/data/make_data_source.hpp"

#include "vime/data/rollout_data_source.hpp"
#include "vime/error.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"

namespace vime::data {
namespace {

using FactoryFunction = plugin::PluginFunction<PluginKind::kDataSource>;

// Forwards to the plugin's object; `factory_` (and with it the .so) outlives `inner_`.
class PluginDataSource : public DataSource {
 public:
  PluginDataSource(FactoryFunction factory, std::unique_ptr<DataSource> inner)
      : factory_(std::move(factory)), inner_(std::move(inner)) {}
  std::vector<SampleGroup> get_samples(int64_t num_groups) override {
    return inner_->get_samples(num_groups);
  }
  void add_samples(std::vector<SampleGroup> groups) override {
    inner_->add_samples(std::move(groups));
  }
  void save(int64_t rollout_id) override { inner_->save(rollout_id); }
  void load(std::optional<int64_t> rollout_id) override { inner_->load(rollout_id); }
  int64_t size() const override { return inner_->size(); }

 private:
  FactoryFunction factory_;
  std::unique_ptr<DataSource> inner_;
};

}  // namespace

std::unique_ptr<DataSource> make_data_source(const Args& args, PromptRenderer renderer,
                                             TokenCounter count_tokens) {
  const DataOptions options = DataOptions::from(args);
  const auto& spec = options.data_source_path;
  if (!spec)
    return RolloutDataSource::from_options(args, options, std::move(renderer),
                                           std::move(count_tokens));
  auto factory =
      plugin::load_plugin<PluginKind::kDataSource>(*spec, "--data-source-path", "data_source");
  std::unique_ptr<DataSource> inner = factory(args);
  if (!inner)
    throw UsageError("--data-source-path " + factory.description() + " returned no data source");
  return std::make_unique<PluginDataSource>(std::move(factory), std::move(inner));
}

}  // namespace vime::data
