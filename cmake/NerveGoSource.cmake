# SPDX-License-Identifier: LGPL-2.1-or-later
# The Go package's source (go/, module nerve.dev/nerve), installed as Debian's golang-*-dev packages
# install theirs: under share/gocode/src/<module path>, so that an engine builds against it with
# GOPATH=/usr/share/gocode, or copies or vendors it. The package's own tests go with it
# (integration_test.go needs a nerved and the build tag nerve_integration).
set(NERVE_GO_MODULE nerve.dev/nerve)
set(NERVE_GO_SOURCE_DIR ${CMAKE_INSTALL_DATADIR}/gocode/src/${NERVE_GO_MODULE}
  CACHE STRING "the Go package's source, relative to the install prefix")
file(GLOB nerve_go_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/go/*.go)
install(FILES ${CMAKE_SOURCE_DIR}/go/go.mod ${nerve_go_files} DESTINATION ${NERVE_GO_SOURCE_DIR})
