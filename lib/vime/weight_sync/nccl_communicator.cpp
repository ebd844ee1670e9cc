#include "vime/weight_sync/nccl_communicator.hpp"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "vime/error.hpp"

namespace vime::weight_sync {
namespace {

using Clock = std::chrono::steady_clock;

// ncclCommInitRank runs on its own thread so the caller can give up (timeout, a failed HTTP
// init call); a thread given up on aborts the communicator if NCCL ever returns it.
struct InitState {
  std::mutex mutex;
  bool done = false;
  bool abandoned = false;
  NcclComm comm = nullptr;
  int result = kNcclSuccess;
  std::string error;
};

at::Device with_index(const at::Device& device) {
  if (device.has_index()) return device;
  return c10::impl::getDeviceGuardImpl(device.type())->getDevice();
}

std::string seconds_text(double s) { return std::to_string(static_cast<int64_t>(s)) + " s"; }

Clock::time_point deadline_after(double timeout_s) {
  if (timeout_s <= 0) return Clock::time_point::max();
  return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
}

}  // namespace

std::string no_cuda_reason() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible != nullptr
             ? "no CUDA device is visible: CUDA_VISIBLE_DEVICES=" + std::string(visible) +
                   " names no GPU of this host (or this LibTorch has no CUDA)"
             : "no CUDA device is visible (no GPU, or this LibTorch has no CUDA)";
}

NcclUniqueId NcclCommunicator::new_unique_id() {
  const auto& nccl = NcclLibrary::get();
  NcclUniqueId id;
  nccl.check(nccl.get_unique_id(&id), "ncclGetUniqueId");
  return id;
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(const NcclUniqueId& id, int world,
                                                           int rank, const at::Device& device,
                                                           double timeout_s,
                                                           const FailureCheck& failure) {
  if (!device.is_cuda() || !at::hasCUDA()) {
    throw Error("NCCL weight transfer needs a CUDA device (got " + device.str() +
                (at::hasCUDA() ? "" : "; " + no_cuda_reason()) +
                "); use the disk weight transfer instead");
  }
  const auto& nccl = NcclLibrary::get();
  const at::Device dev = with_index(device);
  auto state = std::make_shared<InitState>();
  std::thread([state, id, world, rank, dev, &nccl] {
    NcclComm comm = nullptr;
    int result = kNcclSuccess;
    std::string error;
    try {
      c10::DeviceGuard guard(dev);
      result = nccl.comm_init_rank(&comm, world, id, rank);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->abandoned) {
      if (comm != nullptr) nccl.comm_abort(comm);
      return;
    }
    state->comm = comm;
    state->result = result;
    state->error = error;
    state->done = true;
  }).detach();

  const std::string what = "ncclCommInitRank (rank " + std::to_string(rank) + " of " +
                           std::to_string(world) + " on " + dev.str() + ")";
  const auto deadline = deadline_after(timeout_s);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      if (state->done) break;
      std::string reason = failure ? failure() : std::string();
      if (reason.empty() && Clock::now() > deadline) {
        reason = "not every rank joined within " + seconds_text(timeout_s);
      }
      if (!reason.empty()) {
        state->abandoned = true;
        throw Error(what + " gave up: " + reason);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!state->error.empty()) throw Error(what + ": " + state->error);
  nccl.check(state->result, what);
  std::unique_ptr<NcclCommunicator> comm(new NcclCommunicator(state->comm, world, rank, dev));
  // vLLM's PyNcclCommunicator all-reduces one float32 right after init; skipping it would pair the
  // first broadcast with the receivers' all-reduce (deadlock).
  c10::DeviceGuard guard(dev);
  auto warm = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(dev));
  nccl.check(nccl.all_reduce(warm.data_ptr(), warm.data_ptr(), 1, kNcclFloat32, kNcclSum,
                             comm->comm_, nullptr),
             "ncclAllReduce (warm-up)");
  comm->wait("NCCL warm-up all-reduce", timeout_s, failure);
  return comm;
}

NcclCommunicator::NcclCommunicator(NcclComm comm, int world, int rank, const at::Device& device)
    : nccl_(NcclLibrary::get()), comm_(comm), world_(world), rank_(rank), device_(device) {}

NcclCommunicator::~NcclCommunicator() { abort(); }

void NcclCommunicator::abort() {
  if (comm_ == nullptr) return;
  nccl_.comm_abort(comm_);
  comm_ = nullptr;
}

void NcclCommunicator::check_alive(const std::string& what) const {
  if (comm_ == nullptr) {
    throw Error(what + ": the NCCL communicator was aborted by an earlier failure; connect again");
  }
}

void NcclCommunicator::broadcast(const at::Tensor& tensor, int root, bool as_bytes) {
  check_alive("ncclBroadcast");
  if (!tensor.is_contiguous() || tensor.device() != device_) {
    throw Error("ncclBroadcast: internal error: the tensor must be contiguous and on " +
                device_.str());
  }
  const int type = as_bytes ? kNcclUint8 : nccl_data_type(dtype_name(tensor.scalar_type()));
  const size_t count = as_bytes ? tensor.nbytes() : static_cast<size_t>(tensor.numel());
  c10::DeviceGuard guard(device_);
  nccl_.check(
      nccl_.broadcast(tensor.data_ptr(), tensor.data_ptr(), count, type, root, comm_, nullptr),
      "ncclBroadcast");
}

void NcclCommunicator::wait(const std::string& what, double timeout_s,
                            const FailureCheck& failure) {
  check_alive(what);
  const auto deadline = deadline_after(timeout_s);
  const c10::Stream stream(c10::Stream::DEFAULT, device_);
  for (;;) {
    std::string reason;
    try {
      c10::DeviceGuard guard(device_);
      if (stream.query()) return;
      int async_error = kNcclSuccess;
      nccl_.check(nccl_.comm_get_async_error(comm_, &async_error), "ncclCommGetAsyncError");
      if (async_error != kNcclSuccess && async_error != kNcclInProgress) {
        reason = std::string("NCCL error: ") + nccl_.get_error_string(async_error);
      }
    } catch (const std::exception& e) {
      reason = e.what();
    }
    if (reason.empty() && failure) reason = failure();
    if (reason.empty() && Clock::now() > deadline) {
      reason =
          "not done within " + seconds_text(timeout_s) + " (--vllm-weight-transfer-timeout-sec)";
    }
    if (!reason.empty()) {
      abort();
      throw Error(what + " failed: " + reason + "; the NCCL communicator was aborted");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

std::string dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kByte:
      return "uint8";
    case at::kChar:
      return "int8";
    case at::kInt:
      return "int32";
    case at::kLong:
      return "int64";
    case at::kHalf:
      return "float16";
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kBFloat16:
      return "bfloat16";
    default:
      throw Error(std::string("NCCL weight transfer: cannot send dtype ") + c10::toString(type));
  }
}

at::ScalarType scalar_type_from_name(std::string_view name) {
  switch (nccl_data_type(name)) {
    case kNcclUint8:
      return at::kByte;
    case kNcclInt8:
      return at::kChar;
    case kNcclInt32:
      return at::kInt;
    case kNcclInt64:
      return at::kLong;
    case kNcclFloat16:
      return at::kHalf;
    case kNcclFloat32:
      return at::kFloat;
    case kNcclFloat64:
      return at::kDouble;
    case kNcclBfloat16:
      return at::kBFloat16;
  }
  throw Error("NCCL weight transfer: unknown dtype " + std::string(name));
}

}  // namespace vime::weight_sync
