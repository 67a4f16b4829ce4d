# Writes nubo.pc and nubo++.pc for the prefix being installed to (CMAKE_INSTALL_PREFIX, which is
# --prefix's value at install time). Included from an install(CODE) rule in CMakeLists.txt,
# which sets the NUBO_PC_* variables. Directories stay ${prefix}-relative unless configured
# absolute.
foreach(dir LIBDIR INCLUDEDIR)
  if(NOT IS_ABSOLUTE "${NUBO_PC_${dir}}")
    set(NUBO_PC_${dir} "\${prefix}/${NUBO_PC_${dir}}")
  endif()
endforeach()
foreach(pc nubo nubo++)
  configure_file("${NUBO_PC_SOURCE_DIR}/${pc}.pc.in" "${NUBO_PC_BINARY_DIR}/${pc}.pc" @ONLY)
endforeach()
