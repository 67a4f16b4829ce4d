// DLPack 0.6 (dlpack/dlpack.h), the zero-copy exchange format of NumPy, PyTorch, CuPy and JAX:
// a nubo buffer as a DLManagedTensor and back, with the device and dtype mappings and every
// check in one place.
#pragma once

#include <memory>

#include "device/backend/backend.hpp"
#include "nubo/buffer.hpp"

namespace nubo::detail {

// The buffer as a one-dimensional compact tensor sharing its memory (DeviceBuffer::to_dlpack).
DLManagedTensor* export_dlpack(const DeviceBuffer& buffer);

// A buffer over the tensor (Worker::from_dlpack): checks device, dtype, shape and strides, has
// the backend adopt the memory, and takes the tensor, whose deleter runs when the last user of
// the memory is gone. On failure the tensor is untouched and the caller keeps it.
DeviceBuffer import_dlpack(const std::shared_ptr<DeviceBackend>& backend, DLManagedTensor* tensor);

}  // namespace nubo::detail
