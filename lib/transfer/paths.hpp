// The archive's paths: relative, normalised, '/'-separated. Pack produces only such paths; unpack
// refuses anything else before it writes a byte, and refuses links that would lead out of the
// target directory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nubo::transfer::paths {

// The longest path (or link target) an archive, a wire message or a copy takes.
inline constexpr std::size_t kMaxLength = 4096;

// Empty when `path` is a normalised relative path; otherwise why it is not ("is absolute",
// "has a '..' component", ...).
std::string problem(std::string_view path);

// `path` as an error message shows it: control bytes and NUL as \xNN, a backslash doubled, so
// that a name holding a NUL is shown whole rather than cut at it.
std::string shown(std::string_view path);

// Throws Error(corrupt) "entry '<path>': <problem>; refused" when problem() is not empty.
void check_entry(std::string_view path);

// Throws Error(corrupt) when a symlink at `path` with `target` would point outside the tree it
// is unpacked into: an absolute target, or one whose '..' climbs above the root.
void check_link(std::string_view path, std::string_view target);

// "a/b" + "c" = "a/b/c"; "" + "c" = "c".
std::string join(std::string_view dir, std::string_view name);

// The parent of an archive path ("" for a top-level name) and its last component.
std::string_view parent(std::string_view path);
std::string_view leaf(std::string_view path);

}  // namespace nubo::transfer::paths
