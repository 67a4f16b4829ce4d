// The catalog and profile parsers under attack: arbitrary text as a CSV or JSON catalog (the
// format from the first character, as a file without an extension is read), as a file of every
// public source format (SkyPilot, gpuhunt, Spot Advisor, AWS and Azure price lists) and as a
// nubo-train profile. Each either loads or throws nubo::Error; never crashes, hangs or allocates
// without bound, and a refused catalog leaves the one it was loaded into as it was.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nubo/cost.hpp"
#include "nubo/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto catalog = nubo::cost::Catalog::empty();
  const auto before = catalog.instances().size();
  try {
    catalog.load_text(text, "fuzz");
  } catch (const nubo::Error&) {
    if (catalog.instances().size() != before) __builtin_trap();  // half a catalog loaded
  }
  for (const char* format :
       {"skypilot", "gpuhunt", "spot-advisor", "aws-price-list", "azure-retail"}) {
    nubo::cost::CatalogSource source;
    source.name = "fuzz";
    source.format = format;
    source.provider = "aws";
    const auto rows = catalog.instances().size();
    const auto sources = catalog.source_info().size();
    try {
      catalog.import_text(text, source);
    } catch (const nubo::Error&) {
      if (catalog.instances().size() != rows || catalog.source_info().size() != sources)
        __builtin_trap();  // a refused file changed the catalog
    }
  }
  try {
    nubo::cost::Profile::parse(text, "fuzz.json");
  } catch (const nubo::Error&) {
  }
  return 0;
}
