#include "device/host/openblas.hpp"

#include <dlfcn.h>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::detail {
namespace {

// The runtime name first (the Debian alternatives link), then the file found at build time.
constexpr const char* kCandidates[] = {"libopenblas.so.0", NUBO_OPENBLAS_LIBRARY};

template <class F>
F symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

void* open_openblas(void* (*open)(const char* name)) {
  std::string tried;
  for (const char* name : kCandidates) {
    if (void* handle = open(name)) return handle;
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  throw Error(Errc::unavailable,
              "OpenBLAS, which the CPU backend multiplies matrices with, cannot be loaded (" +
                  tried + "): install libopenblas0 (Debian, Ubuntu) or openblas");
}

OpenBlas openblas_symbols(void* handle) {
  OpenBlas b;
  b.sgemm = symbol<decltype(b.sgemm)>(handle, "cblas_sgemm");
  b.sbgemm = symbol<decltype(b.sbgemm)>(handle, "cblas_sbgemm");
  b.set_num_threads = symbol<decltype(b.set_num_threads)>(handle, "openblas_set_num_threads");
  b.get_num_threads = symbol<decltype(b.get_num_threads)>(handle, "openblas_get_num_threads");
  b.setaffinity = symbol<decltype(b.setaffinity)>(handle, "openblas_setaffinity");
  auto get_config = symbol<char* (*)()>(handle, "openblas_get_config");
  if (!b.sgemm || !get_config || !b.set_num_threads || !b.get_num_threads)
    throw Error(Errc::unavailable,
                "the OpenBLAS library loaded lacks cblas_sgemm, openblas_get_config or "
                "openblas_set_num_threads: install libopenblas0 (Debian, Ubuntu) or openblas");
  const char* config = get_config();
  b.config = config ? std::string(text::trim(config)) : "OpenBLAS";
  return b;
}

const OpenBlas& openblas() {
  // A failed load throws out of the initialisation, so the next call tries again. The handle
  // stays open for the life of the process.
  static const OpenBlas blas = openblas_symbols(
      open_openblas([](const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }));
  return blas;
}

std::string openblas_description() {
  try {
    return openblas().config;
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace nubo::detail
