#include "parallel/adopted_memory.hpp"

namespace nubo::detail {
namespace {

struct Adopted {
  std::shared_ptr<DeviceBackend> backend;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  std::function<void()> release;
  bool adopted = false;  // set once adopt() succeeded: only then is there anything to undo

  ~Adopted() {
    if (!adopted) return;
    backend->forget(ptr, bytes);
    if (release) release();
  }
};

}  // namespace

std::shared_ptr<void> adopt_memory(const std::shared_ptr<DeviceBackend>& backend, void* ptr,
                                   std::size_t bytes, std::function<void()> release) {
  // Everything that may throw (allocating the holder, adopt) happens before `adopted` is set,
  // so a failure never runs `release`.
  auto holder = std::make_shared<Adopted>();
  holder->backend = backend;
  holder->ptr = ptr;
  holder->bytes = bytes;
  backend->adopt(ptr, bytes);
  holder->release = std::move(release);
  holder->adopted = true;
  return holder;
}

void* no_elements() noexcept {
  static unsigned char nothing;
  return &nothing;
}

}  // namespace nubo::detail
