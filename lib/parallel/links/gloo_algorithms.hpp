// The Gloo algorithm of a collective between processes, for one set of buffers: Gloo's
// classic algorithms (AllreduceRing and the like), on buffers bound to each connection.
//
// They are used rather than Gloo's newer gloo::allreduce family: with Debian's Gloo
// (2022-05) TCP transport those wait about 4 ms per call whenever data arrives before its
// receive is posted, which made small collectives 10 to 50 times slower than AllreduceRing on
// this machine. Building one allocates scratch space (up to twice the buffer) and registers
// buffers with every connection (taking connection slots, so every process must build the
// same ones in the same order), so GlooLink keeps the last few.
#pragma once

#include <gloo/algorithm.h>
#include <gloo/context.h>

#include <cstddef>
#include <memory>

#include "nubo/dtype.hpp"
#include "parallel/links/step.hpp"

namespace nubo::parallel {

// reduce (each process reduces its slice of every other's and sends it back; avg reduces as a
// sum, the caller divides), broadcast (one to all), gather (a ring) or exchange (each block
// straight to its process); count must fit in an int.
std::unique_ptr<gloo::Algorithm> make_algorithm(const std::shared_ptr<gloo::Context>& ctx,
                                                const Step& step);

}  // namespace nubo::parallel
