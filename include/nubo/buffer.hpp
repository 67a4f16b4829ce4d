// Memory on a worker's device: DeviceBuffer (untyped, with a DType) and Buffer<T> (typed).
// A buffer owns its memory and frees it when destroyed; it keeps its device's backend alive, so
// it may outlive the Team that made it. Like the worker that made it, it is used from one
// thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "nubo/device.hpp"
#include "nubo/dtype.hpp"
#include "nubo/export.hpp"
#include "nubo/half.hpp"

namespace nubo {

namespace detail {
class DeviceBackend;
struct BufferAccess;
}  // namespace detail

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> : std::integral_constant<DType, DType::f32> {};
template <>
struct dtype_of<half> : std::integral_constant<DType, DType::f16> {};
template <>
struct dtype_of<bfloat16> : std::integral_constant<DType, DType::bf16> {};
template <>
struct dtype_of<std::int32_t> : std::integral_constant<DType, DType::i32> {};
template <>
struct dtype_of<std::int64_t> : std::integral_constant<DType, DType::i64> {};
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

class NUBO_API DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates count elements of type on the backend's device; for Worker::alloc.
  DeviceBuffer(std::shared_ptr<detail::DeviceBackend> backend, DType type, std::size_t count);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  DType dtype() const { return type_; }
  std::size_t size() const { return count_; }  // elements
  std::size_t bytes() const { return count_ * dtype_size(type_); }
  bool empty() const { return count_ == 0; }
  // The device pointer (host memory on host and sim devices). nullptr for a moved-from buffer.
  void* data() { return ptr_; }
  const void* data() const { return ptr_; }
  const Device& device() const;

  // Copies bytes between host memory and the buffer, starting offset bytes in; both finish
  // before returning. A range outside the buffer is an invalid_argument.
  void write(const void* host, std::size_t bytes, std::size_t offset = 0);
  void read(void* host, std::size_t bytes, std::size_t offset = 0) const;

 private:
  friend struct detail::BufferAccess;
  std::shared_ptr<detail::DeviceBackend> backend_;
  void* ptr_ = nullptr;
  DType type_ = DType::f32;
  std::size_t count_ = 0;
};

// A DeviceBuffer of T elements (float, half, bfloat16, int32_t, int64_t).
template <class T>
class Buffer : public DeviceBuffer {
 public:
  Buffer() = default;
  explicit Buffer(DeviceBuffer&& raw) : DeviceBuffer(std::move(raw)) {}

  T* data() { return static_cast<T*>(DeviceBuffer::data()); }
  const T* data() const { return static_cast<const T*>(DeviceBuffer::data()); }

  // Host <-> device copies of elements, starting at element `offset`.
  void write(std::span<const T> host, std::size_t offset = 0) {
    DeviceBuffer::write(host.data(), host.size_bytes(), offset * sizeof(T));
  }
  void read(std::span<T> host, std::size_t offset = 0) const {
    DeviceBuffer::read(host.data(), host.size_bytes(), offset * sizeof(T));
  }
  std::vector<T> to_vector() const {
    std::vector<T> v(size());
    read(std::span<T>(v));
    return v;
  }
};

}  // namespace nubo
