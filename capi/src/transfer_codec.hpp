// nubo_codec to nubo::transfer::Codec, shared by the archive and the network entry points.
#pragma once

#include "nubo.h"
#include "nubo/transfer.hpp"

namespace nubo::capi {

// Throws Errc::invalid_argument naming options->codec for a value that is not a nubo_codec.
transfer::Codec to_codec(nubo_codec c);

}  // namespace nubo::capi
