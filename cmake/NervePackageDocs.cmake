# SPDX-License-Identifier: LGPL-2.1-or-later
# What Debian wants in every package besides its programs (cmake/deb/): share/doc/<package>/copyright,
# the machine-readable (DEP-5) copyright file, and share/doc/<package>/changelog.gz, the package's
# changelog in Debian's format, compressed with gzip -9n (changelog.gz, not changelog.Debian.gz: the
# version has no Debian revision, so lintian takes the packages as native ones); and the lintian
# override of nerve-held, which is static on purpose (the comment in the override says why).
# tests/install/check-lintian.sh runs lintian over the packages. A new version needs a new entry at
# the top of cmake/deb/changelog: that test fails when the entry and the version differ.
set(NERVE_DEB_MAINTAINER "nerve maintainers <maintainers@nerve.dev>" CACHE STRING
  "The Debian packages' Maintainer field")
set(nerve_deb_src ${CMAKE_CURRENT_LIST_DIR}/deb)
set(nerve_changelog_gz ${CMAKE_BINARY_DIR}/deb/changelog.gz)
add_custom_command(OUTPUT ${nerve_changelog_gz}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/deb
  COMMAND gzip -9n -c ${nerve_deb_src}/changelog > ${nerve_changelog_gz}
  DEPENDS ${nerve_deb_src}/changelog
  COMMENT "gzip -9n changelog"
  VERBATIM)
add_custom_target(deb-changelog ALL DEPENDS ${nerve_changelog_gz})

# nerve_package_docs(COMPONENT PACKAGE): the copyright file and the changelog of the .deb PACKAGE
# that CPack makes from the install component COMPONENT.
function(nerve_package_docs component package)
  install(FILES ${nerve_deb_src}/copyright ${nerve_changelog_gz}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
endfunction()
nerve_package_docs(nerve nerve)
nerve_package_docs(python python3-nerve)
nerve_package_docs(libnerve libnerve0)
nerve_package_docs(dev libnerve-dev)
install(FILES ${nerve_deb_src}/nerve.lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
  RENAME nerve COMPONENT nerve)
# libnerve0's and libnerve-dev's overrides: what CPack 3.25 and the non-multiarch libdir draw (each
# file says why and what retires it).
install(FILES ${nerve_deb_src}/libnerve0.lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
  RENAME libnerve0 COMPONENT libnerve)
install(FILES ${nerve_deb_src}/libnerve-dev.lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
  RENAME libnerve-dev COMPONENT dev)
