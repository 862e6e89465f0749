# The Debian package: `cpack -G DEB` in the build folder (or `cmake --build build --target package`)
# makes nerve_<version>_<arch>.deb. It installs to /usr: the programs, the user unit in
# /usr/lib/systemd/user, D-Bus activation, man pages, bash completion and the docs.
#
# CPACK_SET_DESTDIR: CPack installs with CMAKE_INSTALL_PREFIX=/usr into a staging DESTDIR, so the
# files rendered at install time (systemd/render.cmake) name /usr/bin/nerved, not the staging folder.
set(CPACK_PACKAGE_NAME nerve)
set(CPACK_PACKAGE_VENDOR "nerve")
set(CPACK_PACKAGE_CONTACT "nerve maintainers <nerve@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "contained workflow runs in systemd user scopes, with verified reaps")
set(CPACK_PACKAGE_DESCRIPTION "nerved puts every run of a workflow into its own transient systemd user
scope and reaps it by stopping the scope and proving its cgroup is empty, so nothing a run started
keeps running. nervectl is its command line; workflow engines use its D-Bus API (org.nerve.Lifecycle1).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # nerve_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
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
include(CPack)
