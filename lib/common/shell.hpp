// Shell scripts that nubo generates (sbatch scripts, the run: of SkyPilot tasks): every value
// from outside enters a script through quote(), so that it is one word whatever it holds, and
// every line of prose through comment(), so that it stays a comment.
#pragma once

#include <string>
#include <string_view>

namespace nubo::shell {

// `word` as one POSIX shell word: in single quotes, each ' written '\''. A shell reads back
// exactly `word`. Error(invalid_argument) naming `what` for a NUL byte, which no shell word holds.
std::string quote(std::string_view word, std::string_view what = "a shell word");

// "# text" lines: every line of `text` a comment, its characters outside printable ASCII escaped.
std::string comment(std::string_view text);

}  // namespace nubo::shell
