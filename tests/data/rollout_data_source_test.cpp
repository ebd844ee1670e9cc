#include "vime/data/rollout_data_source.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/data/make_data_source.hpp"
#include "vime/data/python_random.hpp"
#include "vime/error.hpp"

using vime::Json;
using vime::SampleGroup;
using vime::data::DataOptions;
using vime::data::DatasetOptions;
using vime::data::DataSourceOptions;
using vime::data::PromptDataset;
using vime::data::RolloutDataSource;

namespace {

// A file of `num_prompts` prompts "0", "1", ... like slime's test fixture.
struct Fixture {
  vime::test::TempDir dir;
  std::filesystem::path data;
  explicit Fixture(int num_prompts = 3) {
    std::string text;
    for (int i = 0; i < num_prompts; ++i) text += "{\"text\": \"" + std::to_string(i) + "\"}\n";
    data = dir.write("data.jsonl", text);
  }
  std::shared_ptr<PromptDataset> dataset() const {
    DatasetOptions o;
    o.input_key = "text";
    o.seed = 42;
    return std::make_shared<PromptDataset>(data.string(), o);
  }
  RolloutDataSource source(bool shuffle, int64_t n = 2) const {
    DataSourceOptions o;
    o.n_samples_per_prompt = n;
    o.shuffle = shuffle;
    o.save_dir = dir.path() / "ckpt";
    o.load_dir = dir.path() / "ckpt";
    return RolloutDataSource(dataset(), o);
  }
};

std::vector<std::string> prompts(const std::vector<SampleGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) out.push_back(g.at(0).prompt.as_string());
  return out;
}

// (prompt, group_index, index) of every sample: what a resumed run must reproduce.
std::vector<std::string> identities(const std::vector<SampleGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups)
    for (const auto& s : g)
      out.push_back(s.prompt.dump() + "/" + std::to_string(*s.group_index) + "/" +
                    std::to_string(*s.index) + "/" + s.response);
  return out;
}

}  // namespace

// slime's tests/test_data_source.py::test_requests_follow_the_epoch_stream.
TEST_CASE("requests follow the epoch stream, shuffled per epoch like slime", "[data]") {
  Fixture f;
  for (bool shuffle : {false, true}) {
    for (auto requests :
         std::vector<std::vector<int64_t>>{{8}, {2, 8, 1}, {3, 1, 2}, {0, 2}, {6, 3}}) {
      INFO("shuffle=" << shuffle);
      auto source = f.source(shuffle);
      int64_t total = 0;
      for (auto r : requests) total += r;
      std::vector<std::string> expected;
      for (int64_t epoch = 0; epoch <= total / 3; ++epoch) {
        std::vector<size_t> order{0, 1, 2};
        if (shuffle) order = vime::data::python_shuffled_permutation(3, 42 + epoch);
        for (size_t i : order) expected.push_back(std::to_string(i));
      }
      std::vector<SampleGroup> groups;
      for (auto count : requests) {
        auto batch = source.get_samples(count);
        REQUIRE(static_cast<int64_t>(batch.size()) == count);
        groups.insert(groups.end(), batch.begin(), batch.end());
        CHECK(prompts(groups) ==
              std::vector<std::string>(expected.begin(), expected.begin() + groups.size()));
      }
      int64_t index = 0;
      for (size_t g = 0; g < groups.size(); ++g) {
        REQUIRE(groups[g].size() == 2);
        for (const auto& s : groups[g]) {
          CHECK(*s.group_index == static_cast<int64_t>(g));
          CHECK(*s.index == index++);
        }
      }
    }
  }
}

// slime's tests/test_data_source_epoch_wrap.py.
TEST_CASE("get_samples wraps across every epoch it needs", "[data]") {
  Fixture f(2);
  auto source = f.source(false, 1);
  CHECK(prompts(source.get_samples(7)) ==
        std::vector<std::string>{"0", "1", "0", "1", "0", "1", "0"});
  CHECK(source.epoch_id() == 3);
  CHECK(source.sample_offset() == 1);

  Fixture three(3);
  auto s3 = three.source(false, 1);
  s3.get_samples(2);
  CHECK(prompts(s3.get_samples(7)) == std::vector<std::string>{"2", "0", "1", "2", "0", "1", "2"});
  CHECK(s3.epoch_id() == 2);
  CHECK(s3.sample_offset() == 3);  // the boundary is kept until the next request
  CHECK(prompts(s3.get_samples(1)) == std::vector<std::string>{"0"});
  CHECK(s3.epoch_id() == 3);
  CHECK(s3.sample_offset() == 1);
}

TEST_CASE("the buffer is served first, then the dataset stream", "[data]") {
  Fixture f;
  auto source = f.source(false);
  auto buffered = source.get_samples(1);
  buffered[0][0].response = "partial";
  source.add_samples(buffered);
  CHECK(source.buffer_size() == 1);
  auto groups = source.get_samples(9);
  REQUIRE(groups.size() == 9);
  CHECK(groups[0][0].response == "partial");
  CHECK(prompts(groups) == std::vector<std::string>{"0", "1", "2", "0", "1", "2", "0", "1", "2"});
  CHECK(source.buffer_size() == 0);

  std::vector<SampleGroup> wrong{SampleGroup(3)};
  CHECK_THROWS_WITH(source.add_samples(wrong),
                    Catch::Contains("3 samples") && Catch::Contains("--n-samples-per-prompt is 2"));
}

TEST_CASE("pop_oldest resumes the groups with the oldest weights first", "[data]") {
  auto group = [](std::vector<std::string> versions, std::string tag) {
    vime::Sample s;
    s.weight_versions = std::move(versions);
    s.response = std::move(tag);
    return SampleGroup{s};
  };
  std::vector<SampleGroup> buffer{group({"5"}, "a"), group({}, "b"), group({"x", "2"}, "c"),
                                  group({"-1", "9"}, "d"), group({"5"}, "e")};
  auto taken = vime::data::pop_oldest(std::nullopt, buffer, 3);
  REQUIRE(taken.size() == 3);
  CHECK(taken[0][0].response == "d");
  CHECK(taken[1][0].response == "c");
  CHECK(taken[2][0].response == "a");
  REQUIRE(buffer.size() == 2);
  CHECK(buffer[0][0].response == "e");  // ties keep their order
  CHECK(buffer[1][0].response == "b");  // no numeric version sorts last
}

// slime's test_resume_after_request_spanning_multiple_epochs, extended with a partial-rollout
// buffer: a resumed run must see exactly what an uninterrupted one sees.
TEST_CASE("a resumed data source replays exactly the uninterrupted run", "[data]") {
  for (bool shuffle : {false, true}) {
    INFO("shuffle=" << shuffle);
    Fixture f(5);
    // The reference run: 6 rollouts of 4 groups; rollout 2 hands 2 aborted groups back.
    auto run = [&](RolloutDataSource& source, int64_t first, int64_t last, bool save_at_2) {
      std::vector<std::string> seen;
      for (int64_t rollout = first; rollout < last; ++rollout) {
        auto groups = source.get_samples(4);
        auto ids = identities(groups);
        seen.insert(seen.end(), ids.begin(), ids.end());
        if (rollout == 2) {
          std::vector<SampleGroup> aborted(groups.begin() + 2, groups.end());
          for (auto& g : aborted)
            for (auto& s : g) s.response = "partial@" + std::to_string(rollout);
          source.add_samples(aborted);
        }
        if (save_at_2 && rollout == 2) source.save(rollout);
      }
      return seen;
    };
    auto uninterrupted = f.source(shuffle);
    auto all = run(uninterrupted, 0, 6, false);

    auto first = f.source(shuffle);
    auto before = run(first, 0, 3, true);
    auto resumed = f.source(shuffle);
    resumed.load(2);
    CHECK(resumed.buffer_size() == 2);
    auto after = run(resumed, 3, 6, false);
    before.insert(before.end(), after.begin(), after.end());
    CHECK(before == all);
  }
}

TEST_CASE("state files are JSON, written atomically, and checked on load", "[data]") {
  Fixture f;
  auto source = f.source(true);
  source.get_samples(5);
  source.metadata()["note"] = "kept";
  source.save(7);
  auto path = RolloutDataSource::state_path(f.dir.path() / "ckpt", 7);
  REQUIRE(std::filesystem::exists(path));
  for (auto& entry : std::filesystem::directory_iterator(path.parent_path()))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Json state = Json::parse(text);
  CHECK(state.at("sample_offset") == Json(2));
  CHECK(state.at("epoch_id") == Json(1));
  CHECK(state.at("sample_group_index") == Json(5));
  CHECK(state.at("sample_index") == Json(10));
  CHECK(state.at("metadata").at("note") == Json("kept"));

  // No rollout id: the tracker file decides.
  f.dir.write("ckpt/latest_checkpointed_iteration.txt", "7\n");
  auto latest = f.source(true);
  latest.load(std::nullopt);
  CHECK(latest.epoch_id() == 1);
  CHECK(latest.metadata().at("note") == Json("kept"));
  // A missing state starts from the beginning.
  auto fresh = f.source(true);
  fresh.load(99);
  CHECK(fresh.sample_offset() == 0);

  f.dir.write("ckpt/rollout/global_dataset_state_dict_8.json", "{\"sample_offset\": ");
  CHECK_THROWS_WITH(fresh.load(8), Catch::Contains("global_dataset_state_dict_8.json"));
  f.dir.write("ckpt/rollout/global_dataset_state_dict_9.json",
              "{\"sample_offset\": 40, \"num_prompts\": 50}");
  CHECK_THROWS_WITH(fresh.load(9),
                    Catch::Contains("50 prompts") && Catch::Contains("same --prompt-data"));
  f.dir.write("ckpt/rollout/global_dataset_state_dict_10.json", "{\"epoch_id\": -1}");
  CHECK_THROWS_WITH(fresh.load(10), Catch::Contains("'epoch_id' must be a non-negative integer"));
}

TEST_CASE("edge cases: empty dataset, no global dataset, no --save", "[data]") {
  vime::test::TempDir dir;
  auto empty = dir.write("empty.jsonl", "");
  DatasetOptions o;
  RolloutDataSource source(std::make_shared<PromptDataset>(empty.string(), o), {});
  CHECK(source.get_samples(0).empty());
  CHECK_THROWS_WITH(source.get_samples(1), Catch::Contains("empty dataset"));
  CHECK_THROWS_WITH(source.save(1), Catch::Contains("--save"));

  DataSourceOptions opts;
  opts.n_samples_per_prompt = 2;
  RolloutDataSource no_dataset(nullptr, opts);
  auto groups = no_dataset.get_samples(8);
  REQUIRE(groups.size() == 8);
  CHECK(groups[7].size() == 2);
  CHECK(*groups[7][1].index == 15);
  CHECK(no_dataset.size() == 0);
}

TEST_CASE("from wires the flags and --num-epoch derives --num-rollout", "[data]") {
  Fixture f(10);
  auto args = vime::core::parse_args(std::vector<std::string>{
      "--prompt-data", f.data.string() + "@[1:]", "--input-key", "text", "--n-samples-per-prompt",
      "4", "--rollout-shuffle", "--rollout-seed", "7", "--rollout-batch-size", "4", "--num-epoch",
      "3", "--save", (f.dir.path() / "s").string()});
  auto source = RolloutDataSource::from(args);
  CHECK(source->size() == 9);
  auto groups = source->get_samples(2);
  REQUIRE(groups[0].size() == 4);
  auto perm = vime::data::python_shuffled_permutation(9, 7);
  CHECK(groups[0][0].prompt == Json(std::to_string(perm[0] + 1)));
  CHECK(vime::data::resolve_num_rollout(DataOptions::from(args), source->size()) ==
        6);  // 3 x (9 // 4)
  args.set("num_rollout", Json(11), vime::ArgSource::kCommandLine);
  CHECK(vime::data::resolve_num_rollout(DataOptions::from(args), source->size()) == 11);
  args.set("num_rollout", Json(nullptr), vime::ArgSource::kCommandLine);
  args.set("rollout_batch_size", Json(20), vime::ArgSource::kCommandLine);
  CHECK_THROWS_WITH(vime::data::resolve_num_rollout(DataOptions::from(args), source->size()),
                    Catch::Contains("fewer than --rollout-batch-size 20"));
}

TEST_CASE("--data-source-path plugins replace the built-in data source", "[data]") {
  Fixture f(4);
  auto builtin = vime::data::make_data_source(vime::core::parse_args(
      std::vector<std::string>{"--prompt-data", f.data.string(), "--input-key", "text"}));
  CHECK(builtin->size() == 4);
  CHECK(builtin->get_samples(1)[0][0].prompt == Json("0"));

  const std::string lib = vime::test::plugin_path("data_plugins");
  auto custom = vime::data::make_data_source(vime::core::parse_args(std::vector<std::string>{
      "--data-source-path", lib, "--n-samples-per-prompt", "3", "--prompt-data", f.data.string()}));
  auto groups = custom->get_samples(2);
  REQUIRE(groups.size() == 2);
  CHECK(groups[1].size() == 3);
  CHECK(groups[1][2].prompt == Json("custom-1"));
  CHECK(custom->size() == 1000);
  custom.reset();  // destroyed while its .so is still loaded

  CHECK_THROWS_WITH(
      vime::data::make_data_source(vime::core::parse_args(
          std::vector<std::string>{"--data-source-path", lib + ":no_source"})),
      Catch::Contains("--data-source-path") && Catch::Contains("returned no data source"));
}
