# The build tree's sieve.pc works before any install: `pkg-config --cflags --libs sieve` with
# PKG_CONFIG_PATH=<build>/compaction names the source tree's headers and the built library (with an
# rpath), and the consumer's main.cpp compiles, links and runs with nothing else set.
# -DPCDIR=<build>/compaction -DCONSUMER=<the consumer project> -DWORK=<scratch> -DCXX=<compiler>
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
find_program(pkg_config pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${PCDIR})
sieve_step(${pkg_config} --cflags --libs sieve)
string(STRIP "${step_output}" flags)
string(REGEX MATCHALL "-[IL][^ ]+" dirs "${flags}")
foreach(d ${dirs})
  string(SUBSTRING "${d}" 2 -1 path)
  if(NOT IS_DIRECTORY "${path}")
    message(FATAL_ERROR "sieve.pc of the build tree names ${path}, which is not a folder")
  endif()
endforeach()
separate_arguments(flags UNIX_COMMAND "${flags}")
sieve_step(${CXX} -std=c++20 ${CONSUMER}/main.cpp ${flags} -o ${WORK}/consumer-pkgconfig)
unset(ENV{LD_LIBRARY_PATH})
sieve_step(${WORK}/consumer-pkgconfig)
