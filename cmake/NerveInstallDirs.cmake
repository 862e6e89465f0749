# SPDX-License-Identifier: LGPL-2.1-or-later
# Install destinations of nerve, every one relative to the install prefix, so that
# `cmake --install build --prefix P`, DESTDIR and CPack keep everything under the prefix they are given.
#
# Where a Debian package's pkg-config file names the folder (systemd: systemduserunitdir; dbus-1:
# session_bus_services_dir, interfaces_dir; bash-completion: completionsdir), pkg-config is asked with
# its prefix replaced by a marker and the answer is made relative to it (/usr/lib/systemd/user ->
# lib/systemd/user). A folder that pkg-config does not place under the prefix, or a missing .pc file,
# gives the GNUInstallDirs-relative default, which is what Debian uses. Each is a cache variable:
# -DNERVE_SYSTEMD_USER_UNIT_DIR=... overrides it.
include(GNUInstallDirs)
find_package(PkgConfig QUIET)

function(nerve_install_dir var pkg pkg_var default doc)
  set(dir "${default}")
  if(PKG_CONFIG_EXECUTABLE)
    set(marker "/nerve-install-prefix")
    execute_process(
      COMMAND ${PKG_CONFIG_EXECUTABLE} --define-variable=prefix=${marker} --variable=${pkg_var} ${pkg}
      OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND out MATCHES "^${marker}/(.+)$")
      set(dir "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${var} "${dir}" CACHE STRING "${doc}, relative to the install prefix")
  if(IS_ABSOLUTE "${${var}}")
    message(WARNING "${var}=${${var}} is absolute: it will not follow --prefix or CPack's prefix")
  endif()
endfunction()

nerve_install_dir(NERVE_SYSTEMD_USER_UNIT_DIR systemd systemduserunitdir
  lib/systemd/user "systemd user units (nerved.service)")
nerve_install_dir(NERVE_DBUS_SERVICES_DIR dbus-1 session_bus_services_dir
  ${CMAKE_INSTALL_DATADIR}/dbus-1/services "D-Bus session activation files")
nerve_install_dir(NERVE_DBUS_INTERFACES_DIR dbus-1 interfaces_dir
  ${CMAKE_INSTALL_DATADIR}/dbus-1/interfaces "D-Bus introspection XML")
nerve_install_dir(NERVE_BASH_COMPLETIONS_DIR bash-completion completionsdir
  ${CMAKE_INSTALL_DATADIR}/bash-completion/completions "bash completions")

# The Python package nerve (python/nerve, cmake/NervePython.cmake): where Debian's python3 finds
# packages of /usr (dist-packages, for every python3 version). Under another prefix, PYTHONPATH names
# PREFIX/lib/python3/dist-packages.
set(NERVE_PYTHON_DIR "lib/python3/dist-packages" CACHE STRING
  "the Python package nerve, relative to the install prefix")

# Everything installed without a COMPONENT of its own is the main package's (cmake/NervePackage.cmake
# makes one .deb per component: nerve, and python3-nerve from the component python).
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME nerve)
