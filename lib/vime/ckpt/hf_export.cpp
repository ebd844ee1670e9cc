#include "vime/ckpt/hf_export.hpp"

#include "vime/ckpt/model_io.hpp"

namespace vime::ckpt {
namespace fs = std::filesystem;
namespace {

bool is_weight_file(const fs::path& p) {
  const auto ext = p.extension().string();
  const auto name = p.filename().string();
  return ext == ".safetensors" || ext == ".bin" || ext == ".pt" || ext == ".pth" ||
         name == "model.safetensors.index.json" || name == "pytorch_model.bin.index.json";
}

}  // namespace

int write_hf_directory(const Model& model, const fs::path& out, const fs::path& origin,
                       int64_t vocab_size) {
  const fs::path temp = out.string() + ".tmp";
  fs::remove_all(temp);
  save_hf_model(model, temp, vocab_size);
  int copied = 0;
  for (const auto& entry : fs::directory_iterator(origin)) {
    if (!entry.is_regular_file() || is_weight_file(entry.path())) continue;
    fs::copy_file(entry.path(), temp / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
    ++copied;
  }
  fs::remove_all(out);
  fs::rename(temp, out);
  return copied;
}

}  // namespace vime::ckpt
