// Memory on a worker's device: DeviceBuffer (untyped, with a DType) and Buffer<T> (typed).
//
// Ownership: memory nubo allocated (Worker::alloc) is freed once the buffer and everything that
// shares it (its slices, its DLPack exports) are gone. Memory the application owns
// (Worker::wrap) is never freed by nubo; it must outlive the buffer and its slices. Memory
// imported from DLPack (Worker::from_dlpack) is handed back through the tensor's deleter when
// the last user is gone. A buffer keeps its device's backend alive, so it may outlive the Team
// that made it. Like the worker that made it, it is used from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "nubo/device.hpp"
#include "nubo/dtype.hpp"
#include "nubo/error.hpp"
#include "nubo/export.hpp"
#include "nubo/half.hpp"

// DLPack's tensor (dlpack/dlpack.h, version 0.6): declared here so that nubo's headers do not
// need DLPack's; include <dlpack/dlpack.h> to look inside one.
struct DLManagedTensor;

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
  DeviceBuffer() = default;  // empty; buffers come from Worker::alloc, wrap and from_dlpack
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

  // A view of `count` elements from element `offset`: the same memory, usable wherever a
  // buffer is (collectives, gemm, kernels, DLPack). It keeps nubo's allocation alive as the
  // buffer does. An out-of-range view is an invalid_argument.
  DeviceBuffer slice(std::size_t offset, std::size_t count);

  // Copies bytes between host memory and the buffer, starting offset bytes in; both finish
  // before returning. A range outside the buffer is an invalid_argument.
  void write(const void* host, std::size_t bytes, std::size_t offset = 0);
  void read(void* host, std::size_t bytes, std::size_t offset = 0) const;

  // The buffer as a DLPack tensor (one dimension, compact), without a copy: kDLCPU for host
  // and sim devices, kDLCUDA with the GPU's ordinal for CUDA ones. The tensor shares the
  // memory like a slice does; the consumer calls its deleter when done. numpy.from_dlpack and
  // torch.utils.dlpack.from_dlpack take it as it is.
  DLManagedTensor* to_dlpack();

 private:
  friend struct detail::BufferAccess;
  // Allocates count elements of type on the backend's device (Worker::alloc, through
  // BufferAccess).
  DeviceBuffer(std::shared_ptr<detail::DeviceBackend> backend, DType type, std::size_t count);

  std::shared_ptr<detail::DeviceBackend> backend_;
  std::shared_ptr<void> memory_;  // keeps the memory (or its adoption by the backend) alive
  void* ptr_ = nullptr;
  DType type_ = DType::f32;
  std::size_t count_ = 0;
};

// A DeviceBuffer of T elements (float, half, bfloat16, int32_t, int64_t).
template <class T>
class Buffer : public DeviceBuffer {
 public:
  Buffer() = default;
  // Takes a buffer of T's dtype (invalid_argument for another one).
  explicit Buffer(DeviceBuffer&& raw) : DeviceBuffer(std::move(raw)) {
    if (DeviceBuffer::data() && dtype() != dtype_of_v<T>)
      throw Error(Errc::invalid_argument, "a buffer of " + std::string(dtype_name(dtype())) +
                                              " is not a Buffer of " +
                                              std::string(dtype_name(dtype_of_v<T>)));
  }

  T* data() { return static_cast<T*>(DeviceBuffer::data()); }
  const T* data() const { return static_cast<const T*>(DeviceBuffer::data()); }

  // Host <-> device copies of elements, starting at element `offset`.
  void write(std::span<const T> host, std::size_t offset = 0) {
    DeviceBuffer::write(host.data(), host.size_bytes(), offset * sizeof(T));
  }
  void read(std::span<T> host, std::size_t offset = 0) const {
    DeviceBuffer::read(host.data(), host.size_bytes(), offset * sizeof(T));
  }
  Buffer<T> slice(std::size_t offset, std::size_t count) {
    return Buffer<T>(DeviceBuffer::slice(offset, count));
  }
  std::vector<T> to_vector() const {
    std::vector<T> v(size());
    read(std::span<T>(v));
    return v;
  }
};

}  // namespace nubo
