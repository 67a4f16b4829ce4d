// DeviceBuffer: allocation, shared ownership of the memory (slices, DLPack exports), and host
// copies through the device's backend.
#include "nubo/buffer.hpp"

#include <limits>
#include <utility>

#include "device/backend/backend.hpp"
#include "nubo/error.hpp"
#include "parallel/dlpack.hpp"
#include "parallel/team_state.hpp"

namespace nubo {
namespace {

void check_range(const DeviceBuffer& b, std::size_t bytes, std::size_t offset, const char* what) {
  if (b.data() == nullptr && b.bytes() == 0 && bytes == 0) return;
  if (b.data() == nullptr) {
    throw Error(Errc::invalid_argument, std::string(what) + ": the buffer is empty (moved from)");
  }
  if (offset > b.bytes() || bytes > b.bytes() - offset) {
    throw Error(Errc::invalid_argument, std::string(what) + ": bytes [" + std::to_string(offset) +
                                            ", " + std::to_string(offset) + " + " +
                                            std::to_string(bytes) + ") are outside the buffer of " +
                                            std::to_string(b.bytes()) + " bytes");
  }
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::shared_ptr<detail::DeviceBackend> backend, DType type,
                           std::size_t count)
    : backend_(std::move(backend)), type_(type), count_(count) {
  const std::size_t es = dtype_size(type);
  if (es == 0) {
    throw Error(Errc::invalid_argument, "unknown dtype " + std::to_string(static_cast<int>(type)) +
                                            ": use f32, f16, bf16, i32 or i64");
  }
  if (count > std::numeric_limits<std::size_t>::max() / es) {
    throw Error(Errc::invalid_argument, std::to_string(count) + " elements of " +
                                            std::string(dtype_name(type)) +
                                            " do not fit in memory");
  }
  ptr_ = backend_->allocate(count * es);
  // Freed when the last of this buffer, its slices and its DLPack exports is gone. If making
  // the holder fails, shared_ptr frees the memory itself.
  memory_ = std::shared_ptr<void>(ptr_, [backend = backend_](void* p) {
    try {
      backend->free(p);
    } catch (...) {  // freeing what the backend allocated cannot fail but by a bug; never throw
    }
  });
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : backend_(std::move(other.backend_)),
      memory_(std::move(other.memory_)),
      ptr_(std::exchange(other.ptr_, nullptr)),
      type_(other.type_),
      count_(std::exchange(other.count_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    backend_ = std::move(other.backend_);
    memory_ = std::move(other.memory_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    type_ = other.type_;
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() = default;

DeviceBuffer DeviceBuffer::slice(std::size_t offset, std::size_t count) {
  if (!ptr_) throw Error(Errc::invalid_argument, "slice: the buffer is empty (moved from)");
  if (offset > count_ || count > count_ - offset)
    throw Error(Errc::invalid_argument, "slice: elements [" + std::to_string(offset) + ", " +
                                            std::to_string(offset) + " + " + std::to_string(count) +
                                            ") are outside the buffer of " +
                                            std::to_string(count_));
  return detail::BufferAccess::make(backend_, memory_,
                                    static_cast<unsigned char*>(ptr_) + offset * dtype_size(type_),
                                    type_, count);
}

DLManagedTensor* DeviceBuffer::to_dlpack() {
  return detail::export_dlpack(*this);
}

const Device& DeviceBuffer::device() const {
  if (!backend_) throw Error(Errc::invalid_argument, "the buffer is empty (moved from)");
  return backend_->device();
}

void DeviceBuffer::write(const void* host, std::size_t bytes, std::size_t offset) {
  check_range(*this, bytes, offset, "DeviceBuffer::write");
  if (bytes == 0) return;
  if (host == nullptr) throw Error(Errc::invalid_argument, "DeviceBuffer::write: host is null");
  backend_->copy_to_device(static_cast<unsigned char*>(ptr_) + offset, host, bytes);
  backend_->synchronize();
}

void DeviceBuffer::read(void* host, std::size_t bytes, std::size_t offset) const {
  check_range(*this, bytes, offset, "DeviceBuffer::read");
  if (bytes == 0) return;
  if (host == nullptr) throw Error(Errc::invalid_argument, "DeviceBuffer::read: host is null");
  backend_->copy_to_host(host, static_cast<const unsigned char*>(ptr_) + offset, bytes);
  backend_->synchronize();
}

}  // namespace nubo
