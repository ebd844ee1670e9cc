// A custom data source as users write one for --data-source-path: prompts "custom-0", "custom-1",
// ... in groups of --n-samples-per-prompt, and one factory that returns nothing.
#include <memory>
#include <vime/hooks.hpp>

namespace {

class CountingSource : public vime::DataSource {
 public:
  explicit CountingSource(int64_t n) : n_(n) {}
  std::vector<vime::SampleGroup> get_samples(int64_t num_groups) override {
    std::vector<vime::SampleGroup> out;
    for (int64_t g = 0; g < num_groups; ++g, ++next_) {
      vime::SampleGroup group(static_cast<size_t>(n_));
      for (auto& s : group) s.prompt = "custom-" + std::to_string(next_);
      out.push_back(std::move(group));
    }
    return out;
  }
  void add_samples(std::vector<vime::SampleGroup>) override {}
  void save(int64_t) override {}
  void load(std::optional<int64_t>) override {}
  int64_t size() const override { return 1000; }

 private:
  int64_t n_;
  int64_t next_ = 0;
};

std::unique_ptr<vime::DataSource> data_source(const vime::Args& args) {
  return std::make_unique<CountingSource>(args.get_int("n_samples_per_prompt"));
}

std::unique_ptr<vime::DataSource> no_source(const vime::Args&) { return nullptr; }

}  // namespace

VIME_DATA_SOURCE_PLUGIN(data_source)
VIME_DATA_SOURCE_PLUGIN(no_source)
