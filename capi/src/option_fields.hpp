// What makes a C option field fit for a C++ member (generated/options.hpp takes each field into
// the C++ member of the same name, and makes the C defaults from the C++ ones): a number into
// one of its kind and signedness that holds it (else an error naming the field), a C int flag
// into a bool, a string (NULL: empty), a C enum into a C++ enum (the codec checked as a choice).
// Anything else fails to compile, naming the field.
#pragma once

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "nubo/error.hpp"
#include "result_fields.hpp"
#include "sized_struct.hpp"
#include "transfer_convert.hpp"

namespace nubo::capi {

template <class Cpp, class C>
void take(Cpp& out, const C& in, const std::string& what) {
  if constexpr (std::is_same_v<Cpp, bool>) {
    static_assert(std::is_same_v<C, int>, "a C++ bool comes from a C int flag");
    // Anything but 0 and 1 is more likely a wrong field or garbage than a wish.
    if (in != 0 && in != 1)
      throw Error(Errc::invalid_argument, what + " is " + std::to_string(in) + ": use 0 or 1");
    out = in == 1;
  } else if constexpr (std::is_same_v<Cpp, std::string>) {
    static_assert(std::is_same_v<C, const char*>, "a C++ string comes from a C string");
    out = in == nullptr ? std::string() : std::string(in);
  } else if constexpr (std::is_enum_v<Cpp>) {
    static_assert(std::is_enum_v<C>, "a C++ enum comes from a C enum");
    out = static_cast<Cpp>(in);
  } else if constexpr (std::is_floating_point_v<Cpp>) {
    static_assert(std::is_floating_point_v<C>, "a C++ floating-point member comes from one");
    out = static_cast<Cpp>(in);
  } else {
    static_assert(std::is_integral_v<Cpp> && std::is_integral_v<C> &&
                      std::is_signed_v<C> == std::is_signed_v<Cpp>,
                  "a C++ integer comes from a C integer of its signedness");
    if (in < static_cast<C>(std::numeric_limits<Cpp>::min()) ||
        (sizeof(C) > sizeof(Cpp) && in > static_cast<C>(std::numeric_limits<Cpp>::max())))
      throw Error(Errc::invalid_argument, what + " " + std::to_string(in) + " is out of range");
    out = static_cast<Cpp>(in);
  }
}

// Seconds in C, a duration in C++: NaN, negative and infinite seconds have no duration.
inline void take(std::chrono::milliseconds& out, double seconds, const std::string& what) {
  if (!(seconds >= 0 && seconds <= 1e12))
    throw Error(Errc::invalid_argument,
                what + " is " + std::to_string(seconds) + ": give seconds, 0 or more");
  out = std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}
inline void assign(double& out, std::chrono::milliseconds in) {
  out = static_cast<double>(in.count()) / 1000.0;
}

inline void take(transfer::Codec& out, nubo_codec in, const std::string& /*what*/) {
  out = to_codec(in);
}

// nubo_dtype is nubo::DType value for value (units.cpp asserts it).
inline void take(DType& out, nubo_dtype in, const std::string& what) {
  if (in < NUBO_DTYPE_F32 || in > NUBO_DTYPE_TF32)
    throw Error(Errc::invalid_argument,
                what + " is " + std::to_string(static_cast<int>(in)) + ": not a nubo_dtype (0-5)");
  out = static_cast<DType>(in);
}

// A C pointer field's default is NULL, which stands only for an empty C++ default.
template <class Cpp>
void assign_empty(const Cpp& in, const char* member) {
  bool empty = true;
  if constexpr (std::is_same_v<Cpp, std::string> || std::is_same_v<Cpp, std::vector<std::string>>)
    empty = in.empty();
  else if constexpr (std::is_constructible_v<bool, Cpp>)
    empty = !in;
  if (!empty)
    throw Error(Errc::internal,
                std::string(member) + " has a default the C options cannot carry (NULL only)");
}

}  // namespace nubo::capi
