// The catalog every nubo-cost command plans with: the embedded snapshot as refreshed by
// `nubo-cost catalog update` (and SkyPilot's local catalogs), plus the user's --catalog files;
// and how old its prices are.
#pragma once

#include <string>

#include "commands.hpp"
#include "nubo/cost.hpp"

namespace nubo_cost {

nubo::cost::Catalog load_catalog(const CatalogFlags& f);

// "Prices: 16 sources fetched 2026-12-03 (0 days old)..." and, past --max-age, a warning line
// per stale source naming the command that refreshes it. Empty when no source is dated.
std::string price_age_text(const nubo::cost::Catalog& catalog, const CatalogFlags& f);

}  // namespace nubo_cost
