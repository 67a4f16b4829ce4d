// An entry's metadata as the public API shows it (list, select): one conversion. The archive's
// own fields (hash, chunks, stored size) are the caller's to fill.
#pragma once

#include "nubo/transfer.hpp"
#include "transfer/format/format.hpp"

namespace nubo::transfer {

Entry entry_of(const format::EntryMeta& meta);

}  // namespace nubo::transfer
