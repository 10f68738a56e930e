# CUDA is optional and always compiled when nvcc is present (CI has nvcc but no GPU).
#   -DSIEVE_CUDA=OFF                  CPU-only build
#   -DCMAKE_CUDA_ARCHITECTURES=...    override; default: `native` when a GPU is visible now, else 90
set(SIEVE_HAVE_CUDA OFF)
set(SIEVE_CUDA_ARCH_MESSAGE "")
if(NOT SIEVE_CUDA)
  return()
endif()

if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "sieve: nvcc not found, building the CPU backend only")
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(_sieve_gpu_list "")
  find_program(SIEVE_NVIDIA_SMI nvidia-smi)
  if(SIEVE_NVIDIA_SMI)
    execute_process(COMMAND ${SIEVE_NVIDIA_SMI} -L OUTPUT_VARIABLE _sieve_gpu_list
                    RESULT_VARIABLE _sieve_smi_rc ERROR_QUIET)
    if(NOT _sieve_smi_rc EQUAL 0)
      set(_sieve_gpu_list "")
    endif()
  endif()
  if(_sieve_gpu_list MATCHES "GPU [0-9]")
    set(CMAKE_CUDA_ARCHITECTURES native)
  else()
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
endif()

enable_language(CUDA)
# CMake 3.25 predates nvcc's C++20 mode: tell it the flag, so targets' C++20 reaches .cu files too.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
# Stages are SIEVE_HD lambdas handed to exec::parallel_for (renderer/exec): nvcc needs extended lambdas.
# A host-only function called from device code is an error, not a warning: such a call compiles to
# nothing that works on the GPU (a host-only `operator bool` asked inside a kernel once made the
# one-ray-a-thread extend stage trace wrong paths).
string(APPEND CMAKE_CUDA_FLAGS " --extended-lambda --expt-relaxed-constexpr --Werror cross-execution-space-call")
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
find_package(CUDAToolkit REQUIRED)
set(SIEVE_HAVE_CUDA ON)
set(SIEVE_CUDA_ARCH_MESSAGE " (architectures ${CMAKE_CUDA_ARCHITECTURES}, nvcc ${CMAKE_CUDA_COMPILER_VERSION})")
