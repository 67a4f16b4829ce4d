# Turns a data file into a C++ source defining `std::string_view <SYMBOL>()` in namespace
# nubo::embedded, so catalogs ship inside the library. Run with -P: INPUT, OUTPUT, SYMBOL.
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hex_length)
math(EXPR byte_count "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by cmake/embed.cmake. Do not edit.\n"
"#include <string_view>\n"
"namespace nubo::embedded {\n"
"static const char data[] = {\n${bytes}0};\n"
"std::string_view ${SYMBOL}() { return {data, ${byte_count}}; }\n"
"}  // namespace nubo::embedded\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
