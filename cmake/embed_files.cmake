# Turns the files of a folder into one C++ source defining
# `std::span<const nubo::embedded::File> <SYMBOL>()`, each file under its path relative to BASE.
# Run with -P: BASE, FILES (relative paths separated by '|'), OUTPUT, SYMBOL.
string(REPLACE "|" ";" FILES "${FILES}")
set(body "")
set(table "")
set(index 0)
foreach(file IN LISTS FILES)
  file(READ "${BASE}/${file}" content HEX)
  string(LENGTH "${content}" hex_length)
  math(EXPR byte_count "${hex_length} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
  string(APPEND body "const unsigned char f${index}[] = {${bytes}0};\n")
  string(APPEND table "    {\"${file}\", {reinterpret_cast<const char*>(f${index}), ${byte_count}}},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${BASE} by cmake/embed_files.cmake. Do not edit.\n"
"#include \"common/embedded_files.hpp\"\n"
"namespace nubo::embedded {\n"
"namespace {\n${body}"
"const File files[] = {\n${table}};\n"
"}  // namespace\n"
"std::span<const File> ${SYMBOL}() { return files; }\n"
"}  // namespace nubo::embedded\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
