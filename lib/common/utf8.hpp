// UTF-8 as text from outside is checked and escaped: printable() (nubo/error.hpp), the
// validation of names where they enter (check_plain), and the emitters of generated files
// (yaml.hpp, shell.hpp) read code points through this one decoder.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nubo::utf8 {

// The length of the UTF-8 sequence at the start of `s` and its code point, or 0 when it is not
// one (a stray byte, an overlong or surrogate form, a code point past U+10FFFF, or truncated).
std::size_t sequence(std::string_view s, char32_t& cp);

// Code points that change how text around them is shown: the bidirectional embeddings,
// overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C).
bool reorders_text(char32_t cp);
// Code points that end a line for some reader: LF, CR, and the ones YAML 1.1 and some terminals
// also take as breaks (NEL U+0085, LINE SEPARATOR U+2028, PARAGRAPH SEPARATOR U+2029).
bool breaks_line(char32_t cp);
// C0 controls, DEL and the C1 controls (8-bit CSI and friends).
bool is_control(char32_t cp);

enum class Allow { single_line, lines };
// Error(invalid_argument) "<what>: ..." naming the first offence and where it is, unless `s` is
// text a person could have typed as one name or value: valid UTF-8 of at most `max_bytes`, with
// no control character, no line break and nothing that reorders text. Allow::lines also lets
// LF and TAB through (a command of several lines). Every string from outside (catalog rows,
// queue files, archive records, object metadata) passes here where it enters, so that nothing
// downstream has to guess whether a name can hold a newline.
void check_plain(std::string_view s, std::string_view what, std::size_t max_bytes,
                 Allow allow = Allow::single_line);

// `text` split at its LFs, every byte outside printable ASCII in each line written \xHH: the
// lines of a comment in a generated file, which nothing in them can end.
std::vector<std::string> ascii_lines(std::string_view text);

}  // namespace nubo::utf8
