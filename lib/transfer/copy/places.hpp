// Where the two ends of a copy or a sync live, however they were spelled: a local path, the same
// folder as a file:// URL, through a symlink or with "..", or one S3 bucket reached with two
// profiles. A sync whose destination lies inside its source (or the reverse) would copy onto what
// it reads and, with --delete, delete what it copies from: every pair of places is compared here
// before anything is listed.
#pragma once

#include <string>

#include "transfer/store/store.hpp"

namespace nubo::store {

// A place as where it lives: "local:" and the absolute path, symlinks resolved as far as the path
// exists (a local path or a file:// URL alike), ending with '/'; a store's prefix as its service
// (Store::service), bucket and key. `store` is the place's store, null for a local path.
std::string place_key(const std::string& text, const Store* store);

// Error(invalid_argument) when the places are the same ("A is its own destination (B is the same
// place)") or one lies inside the other ("X and Y overlap: one lies inside the other"), naming both
// as given.
void check_apart(const std::string& a_text, const std::string& a_key, const std::string& b_text,
                 const std::string& b_key);

// The absolute form of `path`: the longest part of it that exists with its symlinks resolved
// (realpath), the rest appended with "." and ".." taken away.
std::string resolved_path(const std::string& path);

}  // namespace nubo::store
