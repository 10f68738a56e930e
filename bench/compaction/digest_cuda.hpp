// The digest (digest.hpp) of rows in device memory, computed on the device: only 16 bytes come back.
#pragma once

#include "digest.hpp"

#include <cstddef>
#include <cstdint>

namespace sieve::bench {

// The digest of rows[0, m), each of `width` bytes (1, 2, 4, 8 or 32); `d_sums` is 2 words of device
// scratch. Waits for the device.
row_digest device_digest(const void* rows, std::size_t m, std::uint32_t width, std::uint64_t* d_sums);

}  // namespace sieve::bench
