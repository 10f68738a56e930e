# ctest `install_layout`: `cmake --install` of this build into a fresh prefix puts the command, the
# scenes, the report script, the library, sieve.pc and the docs there; the installed command reports
# that prefix as its data folder, renders a shipped scene through `sieve bench all` from an empty
# working directory (the results land there, the scene comes from the prefix), and has no
# source-tree path compiled in for its data; the .deb (cpack) holds the same layout under /usr.
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
sieve_step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
sieve_expect_files(${prefix} bin/sieve share/sieve/scenes/cornell-box/cornell-box.toml
                   share/sieve/scenes/cornell-box/cornell-box.obj share/sieve/bench/report.py
                   include/sieve/version.hpp share/doc/sieve/LICENSE share/doc/sieve/CITATION.cff)
file(GLOB_RECURSE pc ${prefix}/*/pkgconfig/sieve.pc)
if(NOT pc)
  message(FATAL_ERROR "no sieve.pc in the prefix")
endif()

sieve_step(${prefix}/bin/sieve --version)
if(NOT step_output MATCHES "^sieve [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ")
  message(FATAL_ERROR "sieve --version printed: ${step_output}")
endif()
sieve_step(${prefix}/bin/sieve info --json)
string(JSON data GET "${step_output}" data)
file(REAL_PATH ${prefix}/share/sieve want)
if(NOT data STREQUAL want)
  message(FATAL_ERROR "the installed command's data folder is ${data}, not ${want}")
endif()

# A shipped scene rendered by the installed command, from an empty working directory.
file(MAKE_DIRECTORY ${WORK}/cwd)
execute_process(COMMAND ${prefix}/bin/sieve bench all --backend cpu --smoke --only image-cornell-box --no-report
                WORKING_DIRECTORY ${WORK}/cwd RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed sieve bench all failed (${rc})")
endif()
# Without --out: a fresh out/bench-<device>-smoke-<UTC date-time>/ under the working directory.
file(GLOB_RECURSE images ${WORK}/cwd/out/*/image-cornell-box.png)
if(NOT images)
  message(FATAL_ERROR "no image-cornell-box.png under the working directory's out/bench-<device>-smoke-<date>/")
endif()
file(GLOB_RECURSE manifest ${WORK}/cwd/out/*/bench-all.json)
file(READ ${manifest} text)
if(NOT text MATCHES "${want}/scenes/cornell-box/cornell-box.toml")
  message(FATAL_ERROR "the recorded command does not name the installed scene")
endif()

# No path into the source tree's data (the scenes, the report script) compiled into the command. The
# debug information names the source files (${SOURCE}/bench/*.cpp): those are not data and do not count.
file(STRINGS ${prefix}/bin/sieve source_paths REGEX "${SOURCE}/(scenes|bench/report\\.py)")
if(source_paths)
  message(FATAL_ERROR "bin/sieve holds source-tree paths: ${source_paths}")
endif()

sieve_build_consumers(${CONSUMER} ${prefix} ${WORK} ${CXX})

# The Debian package (cpack), where the tools are: the same layout under /usr.
find_program(cpack cpack)
find_program(dpkg_deb dpkg-deb)
if(cpack AND dpkg_deb)
  sieve_step(${cpack} --config ${BUILD}/CPackConfig.cmake -B ${WORK}/deb -G DEB -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip)
  file(GLOB deb ${WORK}/deb/sieve_*.deb)
  sieve_step(${dpkg_deb} --contents ${deb})
  foreach(p usr/bin/sieve usr/share/sieve/scenes/cornell-box/cornell-box.toml usr/share/sieve/bench/report.py
            pkgconfig/sieve.pc usr/include/sieve/version.hpp)
    if(NOT step_output MATCHES "${p}")
      message(FATAL_ERROR "the .deb lacks ${p}")
    endif()
  endforeach()
  sieve_step(${dpkg_deb} --field ${deb} Depends)
  if(NOT step_output MATCHES "libtbb")
    message(FATAL_ERROR "the .deb does not depend on oneTBB's runtime: ${step_output}")
  endif()
endif()
