// DeviceBuffer: allocation and host copies through the device's backend.
#include "nubo/buffer.hpp"

#include <limits>
#include <utility>

#include "device/backend.hpp"
#include "nubo/error.hpp"

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
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : backend_(std::move(other.backend_)),
      ptr_(std::exchange(other.ptr_, nullptr)),
      type_(other.type_),
      count_(std::exchange(other.count_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    backend_ = std::move(other.backend_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    type_ = other.type_;
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (backend_ && ptr_) {
    try {
      backend_->free(ptr_);
    } catch (...) {  // freeing what the backend allocated cannot fail but by a bug; never throw
    }
  }
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
