# SPDX-License-Identifier: LGPL-2.1-or-later
# The Python package nerve (python/nerve: the engine API for Python, over python3-jeepney) installs
# into NERVE_PYTHON_DIR (cmake/NerveInstallDirs.cmake) as the component python, which CPack makes the
# package python3-nerve (cmake/NervePackage.cmake). Its sources only: byte code is compiled at install
# by the package's postinst (py3compile) and removed by its prerm (py3clean), as Debian's own Python
# packages do, so no file that dpkg does not know of is left behind.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/nerve DESTINATION ${NERVE_PYTHON_DIR} COMPONENT python
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
