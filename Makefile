# Thin wrapper: every target does its own set-up. The real work is in scripts/ and CMake.
JOBS ?= $(shell nproc)
CMD ?= sh -c 'id; echo hello from the sandbox'

.PHONY: deps programs build run test bench format clean

deps:
	@scripts/install-deps

# What `make run` needs: the executables and the plugins (CMake target cordon-programs), none
# of the tests.
programs: deps
	@cmake --preset dev >/dev/null
	@echo "building cordon's executables and plugins in build/dev (log: build/dev/build.log)"
	@cmake --build --preset dev -j$(JOBS) --target cordon-programs >build/dev/build.log 2>&1 \
	  || { tail -n 60 build/dev/build.log; echo "build failed: build/dev/build.log"; exit 1; }

# Everything of the dev build, tests and benchmarks included.
build: deps
	@cmake --preset dev >/dev/null
	@echo "building cordon in build/dev (log: build/dev/build.log)"
	@cmake --build --preset dev -j$(JOBS) >build/dev/build.log 2>&1 \
	  || { tail -n 60 build/dev/build.log; echo "build failed: build/dev/build.log"; exit 1; }

# The main job: a command in the default sandbox (the `standard` policy).
run: programs
	build/dev/bin/cordon run -- $(CMD)

# The whole test suite: release and asan builds, ctest on both (as root and as an unprivileged
# user), the fuzzers for a short while.
test: deps
	@scripts/test

bench: deps
	@scripts/bench

format:
	@git ls-files '*.cpp' '*.hpp' '*.c' | xargs clang-format -i

clean:
	rm -rf build
