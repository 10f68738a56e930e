#!/usr/bin/env python3
"""tests/check_layers_test.py SCRIPT: scripts/check-layers on small planted trees. A clean tree (edges
downward only) passes; each kind of back edge (an #include, a quoted relative #include, a link, a
layer's CMake reading a higher folder, an include between the renderer's integrators, an include up a
floor or into a room beside inside the library or the renderer: exec < core < bvh | scene < trace <
path < frame < megakernel | wavefront < run < job) fails with a line naming the file and the edge."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = None


def plant(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


# Edges downward only: the renderer includes the library and links it, the app links the bench.
CLEAN = {
    "compaction/include/sieve/compaction.hpp": "#pragma once\n#include <vector>\n",
    # The library's floors: include/ < internal/ < kernels/cpu/, kernels/cuda/ < dispatch/.
    "compaction/internal/call.hpp": "#pragma once\n#include <sieve/compaction.hpp>\n",
    "compaction/kernels/cpu/std.cpp": "#include \"internal/call.hpp\"\n",
    "compaction/kernels/cuda/atomic.cu": "#include \"internal/call.hpp\"\n#include <sieve/compaction.hpp>\n",
    "compaction/dispatch/table.hpp": "#pragma once\n#include \"internal/call.hpp\"\n",
    "compaction/dispatch/registry.cpp": "#include \"table.hpp\"\n#include <sieve/compaction.hpp>\n",
    "compaction/CMakeLists.txt": "add_library(sieve_compaction SHARED a.cpp)\n"
                                 "add_library(sieve::compaction ALIAS sieve_compaction)\n"
                                 "include(Tables)\n",
    "cmake/Tables.cmake": "file(GLOB t ${PROJECT_SOURCE_DIR}/compaction/tuning/*.json)\n",
    "report/report.hpp": "#pragma once\n#include <sieve/compaction.hpp>\n",
    "report/CMakeLists.txt": "add_library(sieve_report STATIC report.cpp)\n"
                             "target_link_libraries(sieve_report PUBLIC sieve::compaction)\n",
    "renderer/path/shade.hpp": "#pragma once\n#include \"../core/math.hpp\"\n#include \"../trace/dfs.hpp\"\n",
    # The renderer's lower floors: exec/ < core/ < bvh/, scene/ (rooms) < trace/ < path/.
    "renderer/exec/exec.hpp": "#pragma once\n",
    "renderer/core/math.hpp": "#pragma once\n#include \"../exec/exec.hpp\"\n",
    "renderer/bvh/bvh.hpp": "#pragma once\n#include \"../core/math.hpp\"\n",
    "renderer/scene/scene.hpp": "#pragma once\n#include <core/math.hpp>\n",
    "renderer/trace/dfs.hpp": "#pragma once\n#include \"../bvh/bvh.hpp\"\n#include <exec/exec.hpp>\n",
    "renderer/megakernel/megakernel.hpp": "#pragma once\n#include \"../path/shade.hpp\"\n",
    "renderer/frame/stats.hpp": "#pragma once\n#include \"../path/shade.hpp\"\n",
    "renderer/wavefront/driver.hpp": "#pragma once\n#include \"../frame/stats.hpp\"\n",
    "renderer/run/render.cpp": "#include \"../megakernel/megakernel.hpp\"\n#include \"../wavefront/driver.hpp\"\n"
                               "#include <report.hpp>\n",
    "renderer/job/job.cpp": "#include <run/render.cpp>\n#include <frame/stats.hpp>\n",
    "renderer/CMakeLists.txt": "add_library(sieve_run STATIC run/render.cpp)\n"
                               "target_link_libraries(sieve_run PUBLIC sieve_report sieve::compaction)\n",
    "bench/trace/trace.cpp": "#include <run/render.hpp>\n",
    "bench/CMakeLists.txt": "add_library(sieve_bench STATIC trace/trace.cpp)\n"
                            "target_link_libraries(sieve_bench PUBLIC sieve_wavefront)\n",
    "app/main.cpp": "#include \"trace/trace.hpp\"\n",
    "app/CMakeLists.txt": "add_executable(sieve main.cpp)\ntarget_link_libraries(sieve PRIVATE sieve_bench)\n",
    "python/src/module.cpp": "#include <job/render_job.hpp>\n#include <sieve/compaction.hpp>\n",
    "renderer/job/render_job.hpp": "#pragma once\n",
    "python/CMakeLists.txt": "add_library(sieve_python MODULE src/module.cpp)\n"
                             "target_link_libraries(sieve_python PRIVATE sieve_wavefront sieve::compaction)\n",
    "tests/t.cpp": "#include \"../app/main.cpp\"\n",  # tests sit outside the layers
}


class CheckLayers(unittest.TestCase):
    def run_on(self, extra):
        with tempfile.TemporaryDirectory() as root:
            plant(root, CLEAN)
            plant(root, extra)
            p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
            return p.returncode, p.stdout

    def expect_edge(self, extra, line):
        rc, out = self.run_on(extra)
        self.assertEqual(rc, 1, out)
        self.assertIn(line, out)

    def test_clean_tree_passes(self):
        rc, out = self.run_on({})
        self.assertEqual(rc, 0, out)
        self.assertIn("no back edge", out)

    def test_library_including_the_renderer_fails(self):
        self.expect_edge({"compaction/dispatch/x.cpp": "// a comment\n#include <run/render.cpp>\n"},
                         "compaction/dispatch/x.cpp:2: compaction includes renderer/run/render.cpp")

    def test_renderer_including_the_bench_by_relative_path_fails(self):
        self.expect_edge({"renderer/core/x.hpp": "#include \"../../bench/trace/trace.cpp\"\n"},
                         "renderer/core/x.hpp:1: renderer includes bench/trace/trace.cpp")

    def test_renderer_including_the_app_fails(self):
        self.expect_edge({"renderer/core/y.cpp": "#include <main.cpp>\n"},
                         "renderer/core/y.cpp:1: renderer includes app/main.cpp")

    def test_renderer_linking_the_bench_fails(self):
        self.expect_edge({"renderer/CMakeLists.txt": CLEAN["renderer/CMakeLists.txt"] +
                          "target_link_libraries(sieve_run PRIVATE sieve_bench)\n"},
                         "sieve_run (renderer) links sieve_bench (bench, a higher layer)")

    def test_library_build_reading_bench_results_fails(self):
        self.expect_edge({"cmake/Tables.cmake": "file(GLOB t ${PROJECT_SOURCE_DIR}/bench/results/*/crossover.json)\n"},
                         "cmake/Tables.cmake:1: compaction's build reads bench/")

    # One back edge per floor and room of the renderer.
    def test_megakernel_including_the_wavefront_fails(self):
        self.expect_edge({"renderer/megakernel/megakernel.hpp": "#include \"../wavefront/driver.hpp\"\n"},
                         "renderer/megakernel/megakernel.hpp:1: renderer/megakernel/ includes "
                         "renderer/wavefront/driver.hpp (renderer/wavefront/, a room beside it)")

    def test_wavefront_including_the_megakernel_fails(self):
        self.expect_edge({"renderer/wavefront/driver.hpp": "#include \"../megakernel/megakernel.hpp\"\n"},
                         "renderer/wavefront/driver.hpp:1: renderer/wavefront/ includes "
                         "renderer/megakernel/megakernel.hpp (renderer/megakernel/, a room beside it)")

    def test_python_module_including_the_app_fails(self):
        self.expect_edge({"python/src/x.cpp": "#include \"../../app/main.cpp\"\n"},
                         "python/src/x.cpp:1: python includes app/main.cpp (app, the layer beside it)")

    def test_app_linking_the_python_module_fails(self):
        self.expect_edge({"app/CMakeLists.txt": CLEAN["app/CMakeLists.txt"] +
                          "target_link_libraries(sieve PRIVATE sieve_python)\n"},
                         "sieve (app) links sieve_python (python, the layer beside it)")

    def test_renderer_including_the_python_module_fails(self):
        self.expect_edge({"renderer/core/z.cpp": "#include \"../../python/src/module.cpp\"\n"},
                         "renderer/core/z.cpp:1: renderer includes python/src/module.cpp (python, a higher layer)")

    def test_exec_including_the_core_fails(self):
        self.expect_edge({"renderer/exec/exec.hpp": "#include \"../core/math.hpp\"\n"},
                         "renderer/exec/exec.hpp:1: renderer/exec/ includes renderer/core/math.hpp "
                         "(renderer/core/, above it)")

    def test_core_including_the_bvh_fails(self):
        self.expect_edge({"renderer/core/math.hpp": "#include <bvh/bvh.hpp>\n"},
                         "renderer/core/math.hpp:1: renderer/core/ includes renderer/bvh/bvh.hpp "
                         "(renderer/bvh/, above it)")

    def test_bvh_including_the_scene_fails(self):
        self.expect_edge({"renderer/bvh/bvh.hpp": "#include \"../scene/scene.hpp\"\n"},
                         "renderer/bvh/bvh.hpp:1: renderer/bvh/ includes renderer/scene/scene.hpp "
                         "(renderer/scene/, a room beside it)")

    def test_scene_including_the_bvh_fails(self):
        self.expect_edge({"renderer/scene/scene.hpp": "#include <bvh/bvh.hpp>\n"},
                         "renderer/scene/scene.hpp:1: renderer/scene/ includes renderer/bvh/bvh.hpp "
                         "(renderer/bvh/, a room beside it)")

    def test_bvh_including_a_traversal_fails(self):
        self.expect_edge({"renderer/bvh/bvh.hpp": "#include \"../trace/dfs.hpp\"\n"},
                         "renderer/bvh/bvh.hpp:1: renderer/bvh/ includes renderer/trace/dfs.hpp "
                         "(renderer/trace/, above it)")

    def test_traversal_including_the_path_code_fails(self):
        self.expect_edge({"renderer/trace/dfs.hpp": "#include \"../path/shade.hpp\"\n"},
                         "renderer/trace/dfs.hpp:1: renderer/trace/ includes renderer/path/shade.hpp "
                         "(renderer/path/, above it)")

    def test_path_code_including_a_missing_wavefront_file_fails(self):
        self.expect_edge({"renderer/path/generate.hpp": "#include \"../wavefront/gone.hpp\"\n"},
                         "renderer/path/generate.hpp:1: renderer/path/ includes renderer/wavefront/gone.hpp")

    def test_path_code_including_the_frame_fails(self):
        self.expect_edge({"renderer/path/connect.hpp": "#include <frame/stats.hpp>\n"},
                         "renderer/path/connect.hpp:1: renderer/path/ includes renderer/frame/stats.hpp "
                         "(renderer/frame/, above it)")

    def test_frame_including_an_integrator_fails(self):
        self.expect_edge({"renderer/frame/waves.hpp": "#include \"../wavefront/driver.hpp\"\n"},
                         "renderer/frame/waves.hpp:1: renderer/frame/ includes renderer/wavefront/driver.hpp "
                         "(renderer/wavefront/, above it)")

    def test_integrator_including_the_run_layer_fails(self):
        self.expect_edge({"renderer/megakernel/megakernel.hpp": "#include <run/render.cpp>\n"},
                         "renderer/megakernel/megakernel.hpp:1: renderer/megakernel/ includes renderer/run/render.cpp "
                         "(renderer/run/, above it)")

    def test_run_layer_including_the_job_fails(self):
        self.expect_edge({"renderer/run/render.cpp": "#include \"../job/job.cpp\"\n"},
                         "renderer/run/render.cpp:1: renderer/run/ includes renderer/job/job.cpp "
                         "(renderer/job/, above it)")

    # One back edge per floor and room of the library.
    def test_public_api_including_the_internals_fails(self):
        self.expect_edge({"compaction/include/sieve/compaction/x.hpp": "#include \"../../../internal/call.hpp\"\n"},
                         "compaction/include/sieve/compaction/x.hpp:1: compaction/include/ includes "
                         "compaction/internal/call.hpp (compaction/internal/, above it)")

    def test_internals_including_a_strategy_fail(self):
        self.expect_edge({"compaction/internal/y.hpp": "#pragma once\n#include \"kernels/cpu/std.cpp\"\n"},
                         "compaction/internal/y.hpp:2: compaction/internal/ includes "
                         "compaction/kernels/cpu/std.cpp (compaction/kernels/cpu/, above it)")

    def test_cpu_strategy_including_a_cuda_strategy_fails(self):
        self.expect_edge({"compaction/kernels/cpu/scan.cpp": "#include \"../cuda/atomic.cu\"\n"},
                         "compaction/kernels/cpu/scan.cpp:1: compaction/kernels/cpu/ includes "
                         "compaction/kernels/cuda/atomic.cu (compaction/kernels/cuda/, a room beside it)")

    def test_cuda_strategy_including_a_cpu_strategy_fails(self):
        self.expect_edge({"compaction/kernels/cuda/scan.cu": "#include \"kernels/cpu/std.cpp\"\n"},
                         "compaction/kernels/cuda/scan.cu:1: compaction/kernels/cuda/ includes "
                         "compaction/kernels/cpu/std.cpp (compaction/kernels/cpu/, a room beside it)")

    def test_strategy_including_the_dispatch_fails(self):
        self.expect_edge({"compaction/kernels/cuda/space.cu": "#include \"dispatch/table.hpp\"\n"},
                         "compaction/kernels/cuda/space.cu:1: compaction/kernels/cuda/ includes "
                         "compaction/dispatch/table.hpp (compaction/dispatch/, above it)")

    def test_internals_including_the_dispatch_fail(self):
        self.expect_edge({"compaction/internal/z.cpp": "#include \"../dispatch/registry.cpp\"\n"},
                         "compaction/internal/z.cpp:1: compaction/internal/ includes "
                         "compaction/dispatch/registry.cpp (compaction/dispatch/, above it)")


if __name__ == "__main__":
    SCRIPT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
