// Which backend a request means, and the error for a request that cannot be run as given.
#pragma once

#include <sieve/compaction/error.hpp>
#include <sieve/compaction/strategies.hpp>  // backend

#include <string>

namespace sieve {

// A request that cannot be run as given (a value out of its set, options that exclude each other): a
// command prints it as one line and exits 2, like its parser's own errors.
class usage_error : public error {
 public:
  using error::error;
};

// The backend `--backend NAME` means: "auto" is cuda when a CUDA device is present, else cpu; a name
// other than auto, cpu or cuda is a usage_error; "cuda" without a device is a sieve::error saying so.
backend resolve_backend(const std::string& name);

}  // namespace sieve
