// The render entry points (run layer, above both integrators): a prepared scene and the settings in,
// the film and its statistics out. Each chooses a backend (render_cpu.cpp, render_cuda.cu) and runs
// the one wave loop over it (wave_loop.hpp). Per wave (as many whole samples of the film as
// max_queue paths hold, or one sample of max_queue pixels for larger films, frame/waves.hpp) either
// integrator runs:
//
//   wavefront:  generate -> for each bounce: extend (DFS or BFS) -> shade -> connect -> compact
//               -> [reorder] -> accumulate          (../wavefront/driver.hpp, one loop for CPU and GPU)
//   megakernel: one thread per path through the same per-path functions (../megakernel), then accumulate
//
// The queue of live paths is compacted by the sieve strategy the settings name, fed the form it
// takes (bit mask, byte flags or removal list) straight from the shade stage.
#pragma once

#include "../frame/prepared_scene.hpp"
#include "../frame/settings.hpp"
#include "../frame/stats.hpp"
#include "../frame/waves.hpp"

namespace sieve::render {

// Renders `s`'s film ([film] width, height, spp, max_bounces, seed) through the one bounce loop
// (driver.hpp). Throws sieve::error for an
// unknown or unfit strategy, traversal or integrator. The megakernel integrator ignores the
// strategy, traversal and reordering.
render_result render_cpu(const prepared_scene& s, const render_settings& settings, const render_controls& controls = {});

// The same loop over device copies of the scene and queues (render_cuda.cu): each wave is
// captured once as a CUDA graph and replayed (one host synchronisation per wave), except with the
// `thrust` strategy, which reads counts back, or a BFS render with stage times (then per-bounce
// synchronisations).
// Throws sieve::error when the build or the machine has no CUDA
// device, or when a device buffer does not fit (naming the size asked for and the memory free).
render_result render_cuda(const prepared_scene& s, const render_settings& settings, const render_controls& controls = {});

// Loads the code of every kernel a wave on the GPU may launch (CUDA loads each on its first use
// otherwise, inside the first frame): what the job runs beside the BVH build. Returns the kernels
// loaded; 0 without CUDA, a device, or a driver that can list a module's kernels (12.4).
std::size_t preload_render_kernels();

}  // namespace sieve::render
