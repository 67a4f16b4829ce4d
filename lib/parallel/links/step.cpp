#include "parallel/links/step.hpp"

namespace nubo::parallel {

std::string difference(const Call& mine, const CallRecord& theirs) {
  const CallRecord& m = mine.record;
  const auto described = [&] { return mine.describe ? mine.describe(theirs) : std::string(); };
  if (theirs.seq != m.seq)
    return "is at collective #" + std::to_string(theirs.seq) + " (" + described() + ")";
  if (theirs.count != m.count || theirs.root != m.root || theirs.kind != m.kind ||
      theirs.type != m.type || theirs.op != m.op)
    return "called " + described();
  return {};
}

}  // namespace nubo::parallel
