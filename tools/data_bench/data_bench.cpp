// data_bench: prompts per second through vime's data pipeline (JSONL -> PromptDataset ->
// RolloutDataSource groups, shuffled per epoch) against slime's Python pipeline on the same file,
// run in the same command (tools/data_bench/slime_baseline.py). Prints one JSON line per phase
// with the ratio, and checks that both shuffled every epoch into the same order.
//
//   build/bin/data_bench [--rows 102400] [--epochs 2] [--batch 256] [--n 8] [--python
//   /usr/bin/python3]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "vime/data/rollout_data_source.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Rows shaped like a math RL set: a prompt of a few hundred characters, a label, metadata.
void write_rows(const std::filesystem::path& path, int64_t rows) {
  std::ofstream out(path);
  const char* topics[] = {"a triangle", "the integers", "a polynomial", "the sequence", "数列"};
  for (int64_t i = 0; i < rows; ++i) {
    std::string prompt =
        "Problem " + std::to_string(i) + ": Let $f(x) = x^2 + " + std::to_string(i % 97) +
        "x + 1$ over " + topics[i % 5] +
        ". Find the sum of all real $x$ with $f(f(x)) = " + std::to_string(i % 13) +
        "$. Please reason step by step, and put your final answer within "
        "\\boxed{}.";
    vime::Json row = vime::Json::object();
    row["prompt"] = prompt;
    row["label"] = "\\frac{" + std::to_string(i % 7 + 1) + "}{" + std::to_string(i % 5 + 2) + "}";
    row["metadata"] =
        vime::Json(vime::Json::Object{{"id", vime::Json(i)}, {"rm_type", vime::Json("math")}});
    out << row.dump() << "\n";
  }
}

std::string run_capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw vime::Error("cannot run " + command);
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  if (::pclose(pipe) != 0) throw vime::Error("baseline failed: " + command + "\n" + out);
  return out;
}

void report(const std::string& phase, double vime_s, double python_s, int64_t items,
            const std::string& unit) {
  std::printf(
      "{\"phase\": \"%s\", \"%s\": %lld, \"vime_s\": %.4f, \"python_s\": %.4f, "
      "\"vime_per_s\": %.0f, \"python_per_s\": %.0f, \"speedup\": %.1f}\n",
      phase.c_str(), unit.c_str(), static_cast<long long>(items), vime_s, python_s, items / vime_s,
      items / python_s, python_s / vime_s);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 102400, epochs = 2, batch = 256, n = 8;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--rows")
      rows = std::stoll(argv[i + 1]);
    else if (flag == "--epochs")
      epochs = std::stoll(argv[i + 1]);
    else if (flag == "--batch")
      batch = std::stoll(argv[i + 1]);
    else if (flag == "--n")
      n = std::stoll(argv[i + 1]);
    else if (flag == "--python")
      python = argv[i + 1];
    else {
      std::fprintf(stderr, "data_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (rows % batch != 0) {
    std::fprintf(stderr, "data_bench: --rows must be a multiple of --batch (whole epochs)\n");
    return 2;
  }
  try {
    const auto dir = std::filesystem::temp_directory_path() / "vime_data_bench";
    std::filesystem::create_directories(dir);
    const auto file = dir / "prompts.jsonl";
    write_rows(file, rows);
    const int64_t seed = 42;

    auto t = Clock::now();
    vime::data::DatasetOptions options;
    options.input_key = "prompt";
    options.label_key = "label";
    options.seed = seed;
    auto dataset = std::make_shared<vime::data::PromptDataset>(file.string(), options);
    const double load_s = seconds_since(t);

    vime::data::DataSourceOptions source_options;
    source_options.n_samples_per_prompt = n;
    source_options.shuffle = true;
    vime::data::RolloutDataSource source(dataset, source_options);
    std::vector<std::vector<int64_t>> heads;
    int64_t num_samples = 0;
    t = Clock::now();
    const int64_t per_epoch = rows / batch;
    for (int64_t e = 0; e < epochs; ++e) {
      std::vector<int64_t> head;
      for (int64_t b = 0; b < per_epoch; ++b) {
        auto groups = source.get_samples(batch);
        for (auto& g : groups) {
          if (head.size() < 20) head.push_back(g[0].metadata.at("id").as_int());
          num_samples += static_cast<int64_t>(g.size());
        }
      }
      heads.push_back(head);
    }
    const double serve_s = seconds_since(t);

    vime::Json py =
        vime::Json::parse(run_capture(python + " " + std::string(VIME_SOURCE_DIR) +
                                      "/tools/data_bench/slime_baseline.py " + file.string() + " " +
                                      std::to_string(epochs) + " " + std::to_string(batch) + " " +
                                      std::to_string(n) + " " + std::to_string(seed)),
                          "baseline output");
    bool same_order = true;
    for (int64_t e = 0; e < epochs; ++e) {
      const auto& expected = py.at("epoch_heads").at(static_cast<size_t>(e)).as_array();
      for (size_t i = 0; i < expected.size(); ++i)
        same_order = same_order && heads[e][i] == expected[i].as_int();
    }
    std::printf(
        "{\"rows\": %lld, \"epochs\": %lld, \"batch\": %lld, \"n\": %lld, "
        "\"python_reader\": \"%s\", \"same_shuffle_order\": %s}\n",
        static_cast<long long>(rows), static_cast<long long>(epochs), static_cast<long long>(batch),
        static_cast<long long>(n), py.at("reader").as_string().c_str(),
        same_order ? "true" : "false");
    report("load", load_s, py.at("load_s").as_double(), rows, "prompts");
    report("serve_groups", serve_s, py.at("serve_s").as_double(), num_samples, "samples");
    std::filesystem::remove_all(dir);
    return same_order && py.at("samples").as_int() == num_samples ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "data_bench: %s\n", e.what());
    return 1;
  }
}
