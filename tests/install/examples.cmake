# ctest `examples`: the programs of examples/ as a user builds them, each run's output compared with
# its expected-output.txt. -DBUILD=<sieve's build folder> -DSRC=<examples/> -DWORK=<scratch>
# -DCXX=<compiler> -DCUDA_ARCHS=<the build's CUDA architectures> -DHAVE_CUDA=<ON when built with CUDA>
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)
file(REMOVE_RECURSE ${WORK})

# Runs `program`; its output must equal `expected` (a file). rc 77: skipped (the CUDA example
# without a GPU), said and accepted.
function(expect_output program expected)
  execute_process(COMMAND ${program} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("$ ${program}\n${out}${err}")
  if(rc EQUAL 77)
    message("skipped (no GPU): ${program}")
    return()
  endif()
  file(READ ${expected} want)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL want)
    message(FATAL_ERROR "${program}: exit ${rc}; its output differs from ${expected}:\n--- got\n${out}--- expected\n${want}")
  endif()
endfunction()

# 1. Installed: find_package(sieve) with CMAKE_PREFIX_PATH.
sieve_step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
set(cuda_args)
if(HAVE_CUDA AND CUDA_ARCHS)
  set(cuda_args "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS}")
elseif(NOT HAVE_CUDA)
  set(cuda_args -DCMAKE_CUDA_COMPILER=NOTFOUND)  # a build without CUDA: the CPU example alone
endif()
sieve_step(${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/installed -G Ninja -DCMAKE_BUILD_TYPE=Release
           -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK}/prefix ${cuda_args})
sieve_step(${CMAKE_COMMAND} --build ${WORK}/installed)
expect_output(${WORK}/installed/cpu/sieve_example_cpu ${SRC}/cpu/expected-output.txt)
if(HAVE_CUDA)
  if(NOT EXISTS ${WORK}/installed/cuda/sieve_example_cuda)
    message(FATAL_ERROR "sieve was built with CUDA but the CUDA example was not built")
  endif()
  expect_output(${WORK}/installed/cuda/sieve_example_cuda ${SRC}/cuda/expected-output.txt)
endif()

# 2. The build tree, exported: sieve_DIR=<the build folder>, no install.
sieve_step(${CMAKE_COMMAND} -S ${SRC}/cpu -B ${WORK}/build-tree -G Ninja -DCMAKE_BUILD_TYPE=Release
           -DCMAKE_CXX_COMPILER=${CXX} -Dsieve_DIR=${BUILD})
sieve_step(${CMAKE_COMMAND} --build ${WORK}/build-tree)
expect_output(${WORK}/build-tree/sieve_example_cpu ${SRC}/cpu/expected-output.txt)

# 3. pkg-config, with the library's folder as the rpath (as docs/library.md shows): runs with no
# LD_LIBRARY_PATH.
find_program(pkg_config pkg-config REQUIRED)
file(GLOB_RECURSE pc ${WORK}/prefix/*/sieve.pc)
list(GET pc 0 pc)
get_filename_component(pcdir ${pc} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pcdir})
unset(ENV{LD_LIBRARY_PATH})
sieve_step(${pkg_config} --cflags --libs sieve)
string(STRIP "${step_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
sieve_step(${pkg_config} --variable=libdir sieve)
string(STRIP "${step_output}" libdir)
sieve_step(${CXX} -std=c++20 ${SRC}/cpu/main.cpp ${flags} -Wl,-rpath,${libdir} -o ${WORK}/pkg-config-cpu)
expect_output(${WORK}/pkg-config-cpu ${SRC}/cpu/expected-output.txt)
