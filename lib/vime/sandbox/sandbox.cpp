#include "vime/sandbox/sandbox.hpp"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "vime/launch/child_process.hpp"

namespace vime::sandbox {
namespace {

namespace fs = std::filesystem;

// A fresh directory per run: work/ (the program's cwd and /tmp) and root/ (the jail's mount
// point), removed with everything the program left in it.
class RunDirectory {
 public:
  RunDirectory() {
    std::string pattern = (fs::temp_directory_path() / "vime_sandbox_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error("code sandbox: cannot create a directory under " +
                  fs::temp_directory_path().string() + ": " + ::strerror(errno));
    }
    path_ = pattern;
    fs::create_directory(work());
    fs::create_directory(root());
    // The program runs as outside_uid(): give it its directory (only root may, and needs to) and
    // let it pass through this one (traverse only: nobody else can list it).
    if (::geteuid() == 0 &&
        (::chown(work().c_str(), outside_uid(), outside_gid()) != 0 ||
         ::chmod(path_.c_str(), 0711) != 0 || ::chmod(work().c_str(), 0700) != 0)) {
      throw Error("code sandbox: chown/chmod under " + path_.string() + ": " + ::strerror(errno));
    }
  }
  ~RunDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (!ec) return;
    // The program may have taken the permissions off what it made: give them back and retry.
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(path_, ec);
    if (ec)
      std::fprintf(stderr, "code sandbox: cannot remove %s: %s\n", path_.c_str(),
                   ec.message().c_str());
  }
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  fs::path work() const { return path_ / "work"; }
  fs::path root() const { return path_ / "root"; }

 private:
  fs::path path_;
};

// The whole environment of a run: nothing of the caller's (API keys, proxies, CUDA settings).
std::vector<std::string> sandbox_env(const std::string& cwd) {
  return {"PATH=/usr/local/bin:/usr/bin:/bin",
          "HOME=" + cwd,
          "TMPDIR=" + cwd,
          "LANG=C.UTF-8",
          "PYTHONPATH=" + cwd,  // as slime's PythonSandbox
          "PYTHONUNBUFFERED=1",
          "PYTHONDONTWRITEBYTECODE=1",
          "PYTHONHASHSEED=0",  // the same code prints its sets and dicts the same way every run
          "OMP_NUM_THREADS=1",
          "OPENBLAS_NUM_THREADS=1",  // a BLAS thread per core would hit RLIMIT_NPROC
          "MKL_NUM_THREADS=1"};
}

}  // namespace

Sandbox::Sandbox(SandboxOptions options) : options_(std::move(options)) {
  if (options_.concurrency < 1) throw UsageError("code sandbox: concurrency must be >= 1");
  if (options_.python.empty()) {
    options_.python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  }
  const auto python = launch::find_program(options_.python);
  if (!python) {
    throw UsageError(
        "code sandbox: python '" + options_.python + "' is not " +
        (options_.python.find('/') != std::string::npos ? "an executable file" : "on PATH"));
  }
  python_ = *python;
  for (const auto& path : options_.read_only_paths) {
    if (path.empty() || path[0] != '/' || !fs::exists(path)) {
      throw UsageError(std::string("code sandbox: ") + kReadOnlyPathsKey + " entry '" + path +
                       "' is not an absolute path that exists");
    }
    const std::string normal = fs::path(path).lexically_normal().string();
    for (const char* reserved : {"/tmp", "/dev"}) {  // the jail's own; "/" would be everything
      if (normal == "/" || normal == reserved ||
          normal.rfind(std::string(reserved) + "/", 0) == 0) {
        throw UsageError(std::string("code sandbox: ") + kReadOnlyPathsKey + " entry '" + path +
                         "' is /, or under /tmp or /dev, which the jail provides itself");
      }
    }
  }
  // Learn what the machine allows from one real run, strongest isolation first.
  for (;;) {
    try {
      const JailResult probe = run_unlimited_slots("pass\n");
      if (probe.exit_code != 0) {
        throw UsageError("code sandbox: " + python_ + " does not run inside the sandbox (" +
                         isolation_name(isolation_) + "): " + probe.stderr_text);
      }
      return;
    } catch (const JailSetupError& e) {
      const bool mounts = e.stage.rfind("mount", 0) == 0 || e.stage == "pivot_root";
      if (isolation_ == Isolation::kFull && e.stage == "exec" && e.error == ENOENT) {
        throw UsageError(std::string(e.what()) + ": " + python_ +
                         " is not inside the sandbox's filesystem; add its installation "
                         "directory to " +
                         kReadOnlyPathsKey);
      }
      if (isolation_ == Isolation::kFull && mounts) {
        if (!options_.host_filesystem) {
          throw UsageError(std::string(e.what()) +
                           "; this kernel refuses the filesystem jail (mounts in a user "
                           "namespace), so sandboxed code could read the host's files. Set " +
                           kHostFilesystemKey + ": true to run without the jail");
        }
        isolation_ = Isolation::kNoFilesystemJail;
      } else if (isolation_ != Isolation::kNone &&
                 (e.stage == "namespaces" || e.stage == "user namespace")) {
        if (!options_.allow_network) {
          throw UsageError(std::string(e.what()) +
                           "; without user and network namespaces sandboxed code could reach "
                           "the network and the host's files. Enable unprivileged user "
                           "namespaces (sysctl user.max_user_namespaces, "
                           "kernel.unprivileged_userns_clone) or set " +
                           kAllowNetworkKey + ": true to run with rlimits only");
        }
        isolation_ = Isolation::kNone;
      } else {
        throw Error(e.what());
      }
    }
  }
}

std::string Sandbox::script_path_inside(const fs::path& work_dir) const {
  return isolation_ == Isolation::kFull ? "/tmp/code.py" : (work_dir / "code.py").string();
}

JailResult Sandbox::run_python(std::string_view script) const {
  {
    std::unique_lock lock(mutex_);
    slot_free_.wait(lock, [this] { return running_ < options_.concurrency; });
    ++running_;
  }
  struct Release {
    const Sandbox& s;
    ~Release() {
      {
        std::lock_guard lock(s.mutex_);
        --s.running_;
      }
      s.slot_free_.notify_one();
    }
  } release{*this};
  return run_unlimited_slots(script);
}

JailResult Sandbox::run_unlimited_slots(std::string_view script) const {
  RunDirectory dir;
  {
    std::ofstream out(dir.work() / "code.py", std::ios::binary);
    out.write(script.data(), static_cast<std::streamsize>(script.size()));
    if (!out) throw Error("code sandbox: cannot write " + (dir.work() / "code.py").string());
  }
  JailSpec spec;
  spec.isolation = isolation_;
  spec.program = python_;
  const std::string cwd = isolation_ == Isolation::kFull ? "/tmp" : dir.work().string();
  spec.argv = {"python3", script_path_inside(dir.work())};
  spec.env = sandbox_env(cwd);
  spec.work_dir = dir.work();
  spec.jail_root = dir.root();
  spec.read_only_paths = options_.read_only_paths;
  spec.limits = options_.limits;
  return run_in_jail(spec);
}

}  // namespace vime::sandbox
