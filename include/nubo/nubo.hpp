// nubo: the umbrella header of the C++ API.
#pragma once

#include "nubo/cost.hpp"
#include "nubo/dataset.hpp"
#include "nubo/device.hpp"
#include "nubo/dtype.hpp"
#include "nubo/elastic.hpp"
#include "nubo/env.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"
#include "nubo/parallel.hpp"
#include "nubo/train.hpp"
#include "nubo/transfer.hpp"
#include "nubo/units.hpp"
#include "nubo/version.h"
