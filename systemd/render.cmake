# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs at install time (install(CODE) in CMakeLists.txt): renders each of NERVE_RENDER_SOURCES (*.in)
# into NERVE_RENDER_OUTPUT_DIR with @CMAKE_INSTALL_FULL_BINDIR@ and @CMAKE_INSTALL_FULL_DOCDIR@ taken
# from the prefix of this install. CMAKE_INSTALL_PREFIX here is the install-time prefix; DESTDIR is
# not part of it, so the files name where the programs are once installed.
foreach(kind BINDIR DOCDIR)
  if(IS_ABSOLUTE "${NERVE_${kind}}")
    set(CMAKE_INSTALL_FULL_${kind} "${NERVE_${kind}}")
  else()
    set(CMAKE_INSTALL_FULL_${kind} "${CMAKE_INSTALL_PREFIX}/${NERVE_${kind}}")
  endif()
endforeach()
foreach(src IN LISTS NERVE_RENDER_SOURCES)
  get_filename_component(name "${src}" NAME)
  string(REGEX REPLACE "\\.in$" "" name "${name}")
  configure_file("${src}" "${NERVE_RENDER_OUTPUT_DIR}/${name}" @ONLY)
endforeach()
