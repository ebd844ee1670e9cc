#include "vime/ckpt/safetensors.hpp"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "vime/ckpt/safetensors_header.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::ckpt {
namespace {

struct DtypeInfo {
  const char* name;
  at::ScalarType type;
  int64_t size;
};
constexpr DtypeInfo kDtypes[] = {
    {"F32", at::kFloat, 4},  {"BF16", at::kBFloat16, 2}, {"F16", at::kHalf, 2},
    {"F64", at::kDouble, 8}, {"I64", at::kLong, 8},      {"I32", at::kInt, 4},
    {"I16", at::kShort, 2},  {"I8", at::kChar, 1},       {"U8", at::kByte, 1},
    {"BOOL", at::kBool, 1},
};

const DtypeInfo* find_dtype(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

const DtypeInfo& dtype_of(at::ScalarType type, const std::string& tensor) {
  for (const auto& d : kDtypes)
    if (d.type == type) return d;
  throw Error("cannot write tensor \"" + tensor + "\" to safetensors: dtype " +
              std::string(c10::toString(type)) + " is not supported");
}

struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base != nullptr && base != MAP_FAILED) munmap(base, size);
  }
};

struct Entry {
  std::string name;
  const DtypeInfo* dtype;
  std::vector<int64_t> shape;
  int64_t begin, end;
};

}  // namespace

struct SafetensorsFile::Impl {
  std::filesystem::path path;
  std::shared_ptr<Mapping> mapping;
  const uint8_t* data = nullptr;  // start of the byte buffer after the header
  std::vector<Entry> entries;
  std::map<std::string, size_t> by_name;
  std::map<std::string, std::string> metadata;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path.string() + ": " + what + " (a corrupt or truncated safetensors file?)");
  }
};

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : impl_(new Impl) {
  impl_->path = path;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  fstat(fd, &st);
  auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    impl_->fail("file is " + std::to_string(file_size) +
                " bytes, shorter than the 8-byte header length");
  }
  impl_->mapping = std::make_shared<Mapping>();
  impl_->mapping->size = file_size;
  // Private and writable: a tensor written in place copies the page instead of changing the file.
  impl_->mapping->base = mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (impl_->mapping->base == MAP_FAILED) impl_->fail("cannot mmap");
  const auto* bytes = static_cast<const uint8_t*>(impl_->mapping->base);
  SafetensorsHeader header = parse_safetensors_header(bytes, file_size, path.string());
  impl_->data = bytes + 8 + header.header_bytes;
  impl_->metadata = std::move(header.metadata);
  for (auto& h : header.entries) {  // sorted by offset, validated
    impl_->entries.push_back(
        Entry{std::move(h.name), find_dtype(h.dtype), std::move(h.shape), h.begin, h.end});
  }
  for (size_t i = 0; i < impl_->entries.size(); ++i) impl_->by_name[impl_->entries[i].name] = i;
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;

const std::filesystem::path& SafetensorsFile::path() const { return impl_->path; }

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& e : impl_->entries) out.push_back(e.name);
  return out;
}

bool SafetensorsFile::contains(const std::string& name) const {
  return impl_->by_name.count(name) > 0;
}

const std::map<std::string, std::string>& SafetensorsFile::metadata() const {
  return impl_->metadata;
}

at::Tensor SafetensorsFile::get(const std::string& name) const {
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) {
    throw Error(impl_->path.string() + ": no tensor \"" + name + "\"");
  }
  const Entry& e = impl_->entries[it->second];
  auto options = at::TensorOptions().dtype(e.dtype->type);
  auto* ptr = const_cast<uint8_t*>(impl_->data + e.begin);
  if (reinterpret_cast<uintptr_t>(ptr) % e.dtype->size != 0) {
    // Headers need not be padded to 8 bytes: copy a misaligned tensor into aligned memory.
    auto out = at::empty(e.shape, options);
    std::memcpy(out.data_ptr(), ptr, e.end - e.begin);
    return out;
  }
  auto keep = impl_->mapping;
  return at::from_blob(
      ptr, e.shape, [keep](void*) mutable { keep.reset(); }, options);
}

void write_safetensors(const std::filesystem::path& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  std::vector<at::Tensor> data;
  std::set<std::string> seen;
  int64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (!seen.insert(name).second) {
      throw Error(path.string() + ": tensor \"" + name + "\" given twice");
    }
    const auto& d = dtype_of(tensor.scalar_type(), name);
    auto cpu = tensor.detach().to(at::kCPU).contiguous();
    Json info = Json::object();
    info["dtype"] = d.name;
    Json shape = Json::array();
    for (auto s : cpu.sizes()) shape.push_back(Json(static_cast<int64_t>(s)));
    info["shape"] = shape;
    int64_t bytes = cpu.numel() * d.size;
    info["data_offsets"] = Json(Json::Array{Json(offset), Json(offset + bytes)});
    header[name] = info;
    offset += bytes;
    data.push_back(cpu);
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  AtomicFile out(path);
  uint64_t len = header_text.size();
  char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<char>(len >> (8 * i) & 0xff);
  out.write(len_bytes, 8);
  out.write(header_text.data(), header_text.size());
  for (const auto& t : data) out.write(t.data_ptr(), t.numel() * t.element_size());
  out.commit();
}

void write_safetensors_dir(const std::filesystem::path& dir, const NamedTensors& tensors,
                           int64_t max_shard_bytes) {
  std::filesystem::create_directories(dir);
  std::vector<NamedTensors> shards(1);
  int64_t shard_bytes = 0, total_bytes = 0;
  for (const auto& nt : tensors) {
    int64_t bytes = nt.second.numel() * nt.second.element_size();
    if (shard_bytes > 0 && shard_bytes + bytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(nt);
    shard_bytes += bytes;
    total_bytes += bytes;
  }
  if (shards.size() == 1) {
    write_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
    return;
  }
  Json weight_map = Json::object();
  char name[64];
  for (size_t i = 0; i < shards.size(); ++i) {
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    write_safetensors(dir / name, shards[i], {{"format", "pt"}});
    for (const auto& nt : shards[i]) weight_map[nt.first] = std::string(name);
  }
  Json index = Json::object();
  index["metadata"] = Json(Json::Object{{"total_size", Json(total_bytes)}});
  index["weight_map"] = weight_map;
  AtomicFile out(dir / "model.safetensors.index.json");
  std::string text = index.dump(2) + "\n";
  out.write(text.data(), text.size());
  out.commit();
}

bool has_safetensors(const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "model.safetensors") ||
      std::filesystem::exists(dir / "model.safetensors.index.json")) {
    return true;
  }
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec))
    if (f.path().extension() == ".safetensors") return true;
  return false;
}

NamedTensors read_safetensors_dir(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  auto index_path = dir / "model.safetensors.index.json";
  if (std::filesystem::exists(index_path)) {
    std::ifstream in(index_path);
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& n : safetensors_index_files(text.str(), index_path.string()))
      files.push_back(dir / n);
  } else if (std::filesystem::exists(dir / "model.safetensors")) {
    files.push_back(dir / "model.safetensors");
  } else {
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(dir, ec))
      if (f.path().extension() == ".safetensors") files.push_back(f.path());
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) {
    throw Error(dir.string() + ": no model.safetensors, index or *.safetensors file");
  }
  NamedTensors out;
  std::set<std::string> seen;
  for (const auto& f : files) {
    if (!std::filesystem::exists(f)) {
      throw Error(f.string() + ": listed in model.safetensors.index.json but missing");
    }
    SafetensorsFile file(f);
    for (const auto& name : file.names()) {
      if (!seen.insert(name).second) throw Error(f.string() + ": tensor \"" + name + "\" repeated");
      out.emplace_back(name, file.get(name));
    }
  }
  return out;
}

}  // namespace vime::ckpt
