// The checks every Worker call makes on the buffers it is given, shared by the collectives
// (worker.cpp) and the compute calls (worker_compute.cpp): each names the call and the operand.
#pragma once

#include <string>

#include "parallel/team_state.hpp"

namespace nubo::detail {

// invalid_argument for an empty (moved-from) buffer or one of another device.
void check_buffer(const WorkerState& w, const DeviceBuffer& b, const char* what, const char* name);
// True when the two buffers' bytes overlap.
bool overlap(const DeviceBuffer& a, const DeviceBuffer& b);
// Both buffers checked, the same dtype, and not overlapping.
void check_pair(const WorkerState& w, const DeviceBuffer& in, const DeviceBuffer& out,
                const char* what);
// "1 element", "10 elements".
std::string size_text(std::size_t n);
// invalid_argument, "WHAT: WHY".
[[noreturn]] void bad_call(const char* what, const std::string& why);
// invalid_argument unless the buffer holds f32, f16 or bf16 (the compute kernels' types).
void check_float(const DeviceBuffer& b, const char* what, const char* name);

}  // namespace nubo::detail
