// Text handed to C callers: NUL-terminated, into their buffer. The size with the NUL goes to
// *needed (when not NULL); a buffer that is NULL or too small gets an empty string (never a
// truncated text, for a caller that ignores the status) and an invalid_argument error that
// says how many bytes to pass next time.
#pragma once

#include <cstddef>
#include <string>

namespace nubo::capi {

// `what` names the text in the error: "the JSON", "the description".
void copy_text_out(const std::string& text, const char* what, char* buf, std::size_t capacity,
                   std::size_t* needed);

}  // namespace nubo::capi
