# Packaging: the data the installed `sieve` command reads, a pkg-config file for the library, and a
# Debian package (`cpack -G DEB` in the build folder).
#
# The command finds its scenes and bench/report.py at run time in <prefix>/share/sieve (installed) or
# <build>/share/sieve (links into the source tree), never through a path compiled in.
if(SIEVE_APP)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenes/ DESTINATION ${SIEVE_DATA_SUBDIR}/scenes)
  # report.py and the modules it imports (its parts, one per group of sections).
  set(report_scripts report.py report_common.py report_compaction.py report_suites.py plot_compaction.py)
  foreach(script ${report_scripts})
    install(PROGRAMS ${PROJECT_SOURCE_DIR}/bench/${script} DESTINATION ${SIEVE_DATA_SUBDIR}/bench)
  endforeach()
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/${SIEVE_DATA_SUBDIR}/bench)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/scenes ${PROJECT_BINARY_DIR}/${SIEVE_DATA_SUBDIR}/scenes SYMBOLIC)
  foreach(script ${report_scripts})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/bench/${script} ${PROJECT_BINARY_DIR}/${SIEVE_DATA_SUBDIR}/bench/${script}
         SYMBOLIC)
  endforeach()
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
              ${PROJECT_SOURCE_DIR}/CITATION.cff
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sieve)
set(CPACK_PACKAGE_VENDOR "the sieve authors")
set(CPACK_PACKAGE_CONTACT "the sieve authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "stream compaction on the CPU (oneTBB) and the GPU (CUDA), measured inside a wavefront path tracer")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)         # libtbb12, libstdc++ ... from the binaries (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-matplotlib")   # bench/report.py
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libtbb-dev")                      # to build against the library
include(CPack)
