# Install rules and the Debian package (docs/install.md).
#
#   cmake --install build/ci --prefix /opt/perseus     # binaries, man pages, units, Python module, docs
#   cd build/ci && cpack -G DEB                        # perseus_<version>_<arch>.deb
#
# Installed: perseus and perseusd, their man pages (generated from --help by
# help2man), systemd units for perseusd and `perseus serve`, the Python
# module `perseus` (rank client and offline optimizer) for the Python the
# build used, the docs, the examples and the licence. Never installed: tests,
# benchmarks and the fake libnvidia-ml (test-only; install(TARGETS) names
# each installed target, so nothing else can slip in).
include(GNUInstallDirs)

set(PERSEUS_INSTALL_PYTHONDIR "lib/python3/dist-packages" CACHE STRING
    "Where the Python package goes, relative to the prefix (Debian's dist-packages by default)")
set(PERSEUS_INSTALL_SYSTEMDDIR "lib/systemd/system" CACHE STRING "Where the systemd units go, relative to the prefix")

install(TARGETS perseus perseusd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

# systemd units name the installed binaries by absolute path, so they are
# written at install time, when the prefix is known (`--prefix`, CPack's /usr).
foreach(unit perseusd perseus-server)
  install(CODE "
    set(PERSEUS_INSTALL_FULL_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
    configure_file(${CMAKE_SOURCE_DIR}/deploy/systemd/${unit}.service.in
                   ${CMAKE_BINARY_DIR}/deploy/install/${unit}.service @ONLY)
    file(INSTALL ${CMAKE_BINARY_DIR}/deploy/install/${unit}.service
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${PERSEUS_INSTALL_SYSTEMDDIR}\")" COMPONENT runtime)
endforeach()

# Man pages from --help: perseus(1), perseus-<subcommand>(1), perseusd(1).
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(FATAL_ERROR "help2man not found: install it (scripts/install_deps.sh does) to build the man pages")
endif()
set(man_pages "")
foreach(page perseus perseus-optimize perseus-emulate perseus-serve perseus-status perseus-carbon perseus-doctor perseusd)
  set(out ${CMAKE_BINARY_DIR}/man/${page}.1)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DHELP2MAN=${HELP2MAN} -DPAGE=${page} -DPERSEUS=$<TARGET_FILE:perseus>
            -DPERSEUSD=$<TARGET_FILE:perseusd> -DVERSION=${PROJECT_VERSION} -DOUT=${out}
            -P ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
    DEPENDS perseus perseusd ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
    COMMENT "man page ${page}(1)")
  list(APPEND man_pages ${out})
endforeach()
add_custom_target(man_pages ALL DEPENDS ${man_pages})
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)

install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/CHANGELOG.md ${CMAKE_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime
        FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/deploy/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/deploy COMPONENT runtime
        PATTERN "*.in" EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/examples/train_loop.py ${CMAKE_SOURCE_DIR}/examples/torch_pipeline.py
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT runtime)

if(TARGET _perseus)
  install(TARGETS _perseus LIBRARY DESTINATION ${PERSEUS_INSTALL_PYTHONDIR}/perseus COMPONENT runtime)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/perseus/ DESTINATION ${PERSEUS_INSTALL_PYTHONDIR}/perseus
          COMPONENT runtime FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)
endif()

# The Debian package: one binary package, dependencies from dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME perseus)
set(CPACK_PACKAGE_VENDOR "perseus developers")
set(CPACK_PACKAGE_CONTACT "perseus developers <perseus@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "energy-optimal GPU clock plans for pipeline-parallel training")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "perseus removes energy bloat from pipeline-parallel training: it profiles each stage's\n computations, computes the iteration time-energy frontier and runs every computation at\n the lowest SM clock that costs no iteration time. Includes the server (perseus serve),\n the node daemon (perseusd), systemd units and the Python rank client (import perseus).")
set(CPACK_PACKAGE_INSTALL_DIRECTORY perseus)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12)")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
include(CPack)

# The installed tree, the .deb and a pip-installed venv, each run from where
# it was installed (tests/install/install_smoke.sh).
if(PERSEUS_BUILD_TESTS AND TARGET _perseus)
  add_test(NAME install_smoke_test
           COMMAND ${CMAKE_SOURCE_DIR}/tests/install/install_smoke.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(install_smoke_test PROPERTIES TIMEOUT 1200 PROCESSORS 2)
endif()
