#pragma once

#include <stdexcept>
#include <string>

namespace sieve {

// Every error sieve reports: bad input, an unknown strategy, a form a strategy lacks, a failed CUDA
// call. The message names the value at fault and, where there is one, what would have fitted.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sieve
