// Memory nubo did not allocate, held by the buffers that use it (Worker::wrap, from_dlpack):
// the backend adopts it (checking the device can use it) for as long as the buffer or any of
// its slices and exports lives, then forgets it and runs `release` (for DLPack: the tensor's
// deleter, handing the memory back to its owner).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "device/backend/backend.hpp"

namespace nubo::detail {

// Throws what adopt() throws; `release` is then not run, so the caller still owns the memory.
std::shared_ptr<void> adopt_memory(const std::shared_ptr<DeviceBackend>& backend, void* ptr,
                                   std::size_t bytes, std::function<void()> release = {});

// The pointer of a buffer of zero elements over no memory (a null pointer from the application
// or a DLPack tensor): a buffer's null pointer means "moved from", so it gets this instead.
void* no_elements() noexcept;

}  // namespace nubo::detail
