# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages: `cpack -G DEB` in the build folder (or `cmake --build build --target package`)
# makes nerve_<version>_<arch>.deb and python3-nerve_<version>_all.deb, one per install component.
# nerve (every install rule without a COMPONENT, cmake/NerveInstallDirs.cmake) installs to /usr: the
# programs, the user unit in /usr/lib/systemd/user, D-Bus activation, man pages, bash completion and
# the docs. python3-nerve (the component python, cmake/NervePython.cmake) is the Python package in
# /usr/lib/python3/dist-packages/nerve, architecture all, depending on nerve and python3-jeepney: a
# package of its own, so that a host without Python engines needs no Python.
# libnerve0 (the component libnerve) is the C library, libnerve.so.0 and its link libnerve.so.0.x.y;
# libnerve-dev (the component dev) its header nerve.h, the link libnerve.so, libnerve.pc and nerve(3).
# Two packages, as Debian's policy has it for a shared library (8.1, 8.4): the library in a package
# named for its soname, so that a libnerve1 could one day be installed beside it while programs built
# against libnerve.so.0 still run; what only a build needs in -dev, so that hosts that run nervectl
# and engines (which load libnerve.so.0) carry no header. nerve depends on libnerve0 (its nervectl
# uses the library for every verb it runs itself).
#
# Every package has its copyright file and changelog, and nerve its lintian override
# (cmake/NervePackageDocs.cmake); tests/install/check-lintian.sh holds them to lintian.
#
# CPACK_SET_DESTDIR: CPack installs with CMAKE_INSTALL_PREFIX=/usr into a staging DESTDIR, so the
# files rendered at install time (systemd/render.cmake) name /usr/bin/nerved, not the staging folder.
set(CPACK_PACKAGE_NAME nerve)
set(CPACK_PACKAGE_VENDOR "nerve")
include(NervePackageDocs)
set(CPACK_PACKAGE_CONTACT "${NERVE_DEB_MAINTAINER}")
# Each package's Description: its first line is the synopsis, the rest the extended description,
# every line within 80 columns (CPack copies the lines as they are). No
# CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put that one synopsis above both packages' text.
set(CPACK_PACKAGE_DESCRIPTION "workflow runs contained in systemd user scopes, reaped with proof
nerved puts every run of a workflow into its own transient systemd user
scope before its command starts, and reaps a run by stopping the scope and
proving that its cgroup is empty: nothing a run started keeps running, not
even processes that called setsid, double-forked or ignore SIGTERM.
nervectl is its command line; workflow engines use its D-Bus API,
org.nerve.Lifecycle1.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # nerve_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SOURCE nerve)  # both packages come from this one source tree
# Libraries (libsdbus-c++1, libspdlog, libstdc++6, ...) from dpkg-shlibdeps when it is there; named
# by hand otherwise. Besides: a systemd user manager and the session bus it manages
# (dbus-user-session), and libsystemd0, the sd-bus under sdbus-c++ (a dependency of libsdbus-c++1
# too, named so that it is not lost if sdbus-c++ changes its backend).
find_program(NERVE_DPKG_SHLIBDEPS dpkg-shlibdeps)
set(nerve_runtime_depends "systemd (>= 247), dbus-user-session, libsystemd0")
if(NERVE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${nerve_runtime_depends}")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsdbus-c++1 (>= 1.2), libspdlog1.10-fmt9, libstdc++6, libc6, ${nerve_runtime_depends}")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL nerve python libnerve dev)
set(CPACK_DEBIAN_NERVE_PACKAGE_NAME nerve)
set(CPACK_DEBIAN_NERVE_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_NERVE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_DEBIAN_NERVE_PACKAGE_DEPENDS "${CPACK_DEBIAN_PACKAGE_DEPENDS}, libnerve0 (= ${PROJECT_VERSION})")
# nervectl needs libnerve.so.0, which is in the staging folder of libnerve0: dpkg-shlibdeps is told
# where (relative to the folder of the package it runs for).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "../libnerve/usr/${CMAKE_INSTALL_LIBDIR}")
# The shlibs file and the ldconfig trigger of a package with a shared library (libnerve0).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
set(CPACK_DEBIAN_LIBNERVE_PACKAGE_NAME libnerve0)
set(CPACK_DEBIAN_LIBNERVE_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_LIBNERVE_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIBNERVE_PACKAGE_DEPENDS "libsystemd0, libc6")
set(CPACK_DEBIAN_LIBNERVE_DESCRIPTION "C library of nerve, for engines that contain and reap their runs
libnerve contains a process and execs it, launches a command, waits for
its end (with a timeout or from an event loop), reaps, cancels, freezes
and thaws a run and reads its receipt, through nerved on the session bus
(sd-bus). Errors come back as the bus errors' names and messages.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libnerve-dev)
set(CPACK_DEBIAN_DEV_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libnerve0 (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEV_DESCRIPTION "C library of nerve: development files
The files to build C and C++ programs against libnerve: the header
nerve.h, the link libnerve.so, pkg-config's libnerve.pc and the manual
page nerve(3).")
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-nerve)
set(CPACK_DEBIAN_PYTHON_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3:any (>= 3.9), python3-jeepney (>= 0.7), nerve (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
  "${CMAKE_CURRENT_LIST_DIR}/python3-nerve/postinst;${CMAKE_CURRENT_LIST_DIR}/python3-nerve/prerm")
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "Python package for workflow engines to run their commands under nerve
The package nerve launches each run of a workflow in its own systemd user
scope through nerved, waits for it, reaps or cancels it and reads its
receipt, blocking or with asyncio, with no D-Bus code in the engine (it
uses python3-jeepney).")
include(CPack)
