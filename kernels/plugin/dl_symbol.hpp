// dlsym with the cast to a function pointer in one place.
#pragma once

#include <dlfcn.h>

namespace nubo::cuda_plugin {

// The symbol as a pointer of type F, or nullptr when the library does not export it.
template <class F>
F dl_symbol(void* library, const char* name) noexcept {
  // POSIX guarantees that a dlsym result converts to a function pointer.
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace nubo::cuda_plugin
