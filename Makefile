# sieve: the two commands of the README, and a few more.
#   make run    set up, build Release, run the main job
#   make test   set up, build, run every test (what CI runs)
BUILD      ?= build
TEST_BUILD ?= build-test
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: setup run test build clean

setup:
	@scripts/setup

build: setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

# The main job: render the Cornell box (PNG, EXR, JSON report in out/) and print where the time went.
run: build
	$(BUILD)/renderer/app/sieve render scenes/cornell-box/cornell-box.toml \
	  --out out/cornell-box.png --exr out/cornell-box.exr --json out/cornell-box.json

test: setup
	cmake -S . -B $(TEST_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)
	cmake --build $(TEST_BUILD) -j $(JOBS)
	ctest --test-dir $(TEST_BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(TEST_BUILD)
