# sieve: the two commands of the README, and a few more.
#   make run    set up, build Release, run the main job
#   make test   set up, build, run every test, then the sanitizer build's tests and fuzz smoke (what CI runs)
#   make sanitize  the CPU tests under AddressSanitizer + UBSan (clang), the fuzzers' regressions and smoke
BUILD      ?= build
TEST_BUILD ?= build-test
SAN_BUILD  ?= build-sanitize
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: setup run test sanitize build clean

setup:
	@scripts/setup

build: setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

# The main job: render the Cornell box (PNG, EXR, JSON report in out/) and print where the time went.
run: build
	$(BUILD)/app/sieve render scenes/cornell-box/cornell-box.toml \
	  --out out/cornell-box.png --exr out/cornell-box.exr --json out/cornell-box.json

# Every benchmark of the backends present, then report.md with plots and images in a fresh
# out/bench-<device>-<UTC date-time>/ (`sieve bench all`; it prints its plan and expected duration
# first). QUICK=1: a few minutes. BENCH_ARGS: more options, e.g. BENCH_ARGS="--backend both", or
# BENCH_ARGS="--out bench/results/<device>" to update the committed results.
.PHONY: bench
bench: build
	$(BUILD)/app/sieve bench all $(if $(QUICK),--quick) $(BENCH_ARGS)

test: setup
	cmake -S . -B $(TEST_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)
	cmake --build $(TEST_BUILD) -j $(JOBS)
	ctest --test-dir $(TEST_BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory sanitize

# The CPU code built by clang with ASan + UBSan (every finding fatal) and the libFuzzer targets; runs
# the CPU tests (not the install, build-tree pkg-config and library-only tests, which build consumers without the sanitizers) and the
# fuzzers' regression inputs plus a few seconds of fuzzing each. scripts/fuzz runs them for longer.
sanitize: setup
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSIEVE_CUDA=OFF -DSIEVE_SANITIZE=ON -DSIEVE_FUZZ=ON
	cmake --build $(SAN_BUILD) -j $(JOBS)
	ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) -L 'cpu|fuzz' -E 'install_consumer|install_layout|library_only|examples|build_tree_pkgconfig'

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(SAN_BUILD)
