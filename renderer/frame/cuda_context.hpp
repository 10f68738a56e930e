// The CUDA context made early: on a thread of its own, at once, so that it is ready when the scene
// has loaded instead of starting then (the driver's start and the device's primary context take a
// few hundred milliseconds on a large GPU), and the pinned buffers that large uploads are staged
// through (exec/staged_copy.cuh) with it. cuda_free_memory (waves.hpp) waits for it.
#pragma once

namespace sieve::render {

// Once a process; nothing without CUDA or a device (an error, if any, is left for the render's own
// first CUDA call to report). Only where the process uses the default device (not in a split
// render, whose ranks pick theirs).
void start_cuda_context();

}  // namespace sieve::render
