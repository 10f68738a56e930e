#pragma once

// SIEVE_HD marks a function written once for the CPU and the GPU: __host__ __device__ under nvcc,
// nothing under a host compiler. No other include, so any header may use it.
#if defined(__CUDACC__)
#define SIEVE_HD __host__ __device__
#else
#define SIEVE_HD
#endif
