#include "device/sim/sim_backend.hpp"

#include "nubo/error.hpp"

namespace nubo::detail {

SimBackend::SimBackend(Device device)
    : HostBackend(device, static_cast<std::size_t>(device.memory_total)) {}

std::string SimBackend::describe() const {
  const Device& d = device();
  return "sim " + std::to_string(d.index) + " (" + (d.model.empty() ? d.name : d.model) + ")";
}

void SimBackend::check_range(const void* ptr, std::size_t bytes, const char* what) const {
  if (bytes == 0) return;  // an empty operand touches nothing
  if (!ptr) throw Error(Errc::invalid_argument, describe() + ": " + what + " is a null pointer");
  if (!owns(ptr, bytes))
    throw Error(Errc::invalid_argument,
                describe() + ": " + what + " (" + std::to_string(bytes) +
                    " bytes) is not inside memory allocated on this device: a buffer of another "
                    "device, a host array, a freed buffer or an overrun");
}

}  // namespace nubo::detail
