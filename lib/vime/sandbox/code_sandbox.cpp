// The plugins' sandbox (vime/code_sandbox.hpp) over Sandbox: its own small types, so that the
// sandbox's can change without changing the plugin ABI.
#include "vime/code_sandbox.hpp"

#include <string_view>

#include "vime/sandbox/sandbox.hpp"

namespace vime {

static_assert(std::string_view(kSandboxAllowNetworkKey) == sandbox::kAllowNetworkKey);
static_assert(std::string_view(kSandboxHostFilesystemKey) == sandbox::kHostFilesystemKey);
static_assert(std::string_view(kSandboxReadOnlyPathsKey) == sandbox::kReadOnlyPathsKey);

namespace {

// The plugins' defaults are the sandbox's.
constexpr bool same_default_limits() {
  constexpr CodeSandboxLimits a;
  constexpr sandbox::SandboxLimits b;
  return a.wall_timeout_s == b.wall_timeout_s && a.cpu_seconds == b.cpu_seconds &&
         a.memory_bytes == b.memory_bytes && a.file_size_bytes == b.file_size_bytes &&
         a.open_files == b.open_files && a.processes == b.processes &&
         a.max_output_bytes == b.max_output_bytes;
}
static_assert(same_default_limits());

sandbox::SandboxOptions sandbox_options(const CodeSandboxOptions& o) {
  sandbox::SandboxOptions s;
  s.limits.wall_timeout_s = o.limits.wall_timeout_s;
  s.limits.cpu_seconds = o.limits.cpu_seconds;
  s.limits.memory_bytes = o.limits.memory_bytes;
  s.limits.file_size_bytes = o.limits.file_size_bytes;
  s.limits.open_files = o.limits.open_files;
  s.limits.processes = o.limits.processes;
  s.limits.max_output_bytes = o.limits.max_output_bytes;
  s.concurrency = o.concurrency;
  s.python = o.python;
  s.allow_network = o.allow_network;
  s.host_filesystem = o.host_filesystem;
  s.read_only_paths = o.read_only_paths;
  return s;
}

}  // namespace

struct CodeSandbox::Impl {
  explicit Impl(const CodeSandboxOptions& options) : sandbox(sandbox_options(options)) {}
  sandbox::Sandbox sandbox;
};

CodeSandbox::CodeSandbox(const CodeSandboxOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
CodeSandbox::CodeSandbox(CodeSandbox&&) noexcept = default;
CodeSandbox& CodeSandbox::operator=(CodeSandbox&&) noexcept = default;
CodeSandbox::~CodeSandbox() = default;

CodeSandboxRun CodeSandbox::run_python(std::string_view script) const {
  sandbox::JailResult r = impl_->sandbox.run_python(script);
  CodeSandboxRun run;
  run.stdout_text = std::move(r.stdout_text);
  run.stderr_text = std::move(r.stderr_text);
  run.stdout_bytes = r.stdout_bytes;
  run.stderr_bytes = r.stderr_bytes;
  run.exit_code = r.exit_code;
  run.signal = r.signal;
  run.timed_out = r.timed_out;
  run.seconds = r.seconds;
  return run;
}

const std::string& CodeSandbox::python() const { return impl_->sandbox.python(); }

const char* CodeSandbox::isolation_name() const {
  return sandbox::isolation_name(impl_->sandbox.isolation());
}

}  // namespace vime
