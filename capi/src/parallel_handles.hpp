// The objects behind nubo_parallel.h's opaque handles, and the casts between them. The handles
// stay incomplete types, as the header declares them (see report.hpp for why).
#pragma once

#include <memory>
#include <utility>

#include "guard.hpp"
#include "nubo.h"
#include "nubo/parallel.hpp"

namespace nubo::capi {

struct TeamHandle {
  explicit TeamHandle(nubo::Team t) : team(std::move(t)) {}
  nubo::Team team;
};

inline nubo_team* to_handle(TeamHandle* t) {
  return reinterpret_cast<nubo_team*>(t);
}
inline TeamHandle& require_team(nubo_team* t) {
  return *reinterpret_cast<TeamHandle*>(require(t, "team"));
}
inline const TeamHandle* team_of(const nubo_team* t) {
  return reinterpret_cast<const TeamHandle*>(t);
}

inline nubo_worker* to_handle(nubo::Worker* w) {
  return reinterpret_cast<nubo_worker*>(w);
}
inline nubo::Worker& require_worker(nubo_worker* w) {
  return *reinterpret_cast<nubo::Worker*>(require(w, "worker"));
}
inline const nubo::Worker& require_worker(const nubo_worker* w) {
  return *reinterpret_cast<const nubo::Worker*>(require(w, "worker"));
}

inline nubo_buffer* to_handle(nubo::DeviceBuffer* b) {
  return reinterpret_cast<nubo_buffer*>(b);
}
inline nubo::DeviceBuffer& require_buffer(nubo_buffer* b, const char* name) {
  return *reinterpret_cast<nubo::DeviceBuffer*>(require(b, name));
}
inline const nubo::DeviceBuffer& require_buffer(const nubo_buffer* b, const char* name) {
  return *reinterpret_cast<const nubo::DeviceBuffer*>(require(b, name));
}

inline nubo_event* to_handle(nubo::Event* e) {
  return reinterpret_cast<nubo_event*>(e);
}
inline const nubo::Event& require_event(const nubo_event* e) {
  return *reinterpret_cast<const nubo::Event*>(require(e, "event"));
}

inline nubo_pending* to_handle(nubo::Pending* p) {
  return reinterpret_cast<nubo_pending*>(p);
}
// Hands a Pending to the caller as a handle.
inline void give(nubo::Pending p, nubo_pending** out) {
  *out = to_handle(new nubo::Pending(std::move(p)));
}
inline nubo::Pending* pending_of(nubo_pending* p) {
  return reinterpret_cast<nubo::Pending*>(p);
}

// nubo_dtype and nubo_reduce_op are nubo::DType and nubo::ReduceOp, value for value; values
// from a newer caller are rejected here with a message rather than passed on. They take the
// caller's enum by reference and read its bytes: in C++ merely loading a C enum holding a value
// outside its enumerators is undefined (UBSan's -fsanitize=enum says so).
DType to_dtype(const nubo_dtype& type);
ReduceOp to_op(const nubo_reduce_op& op);
Transpose to_transpose(const nubo_transpose& t, const char* name);
// Hands a new buffer to the caller as a handle.
void give(nubo::DeviceBuffer buffer, nubo_buffer** out);
int raw_value(const nubo_status& status);

}  // namespace nubo::capi
