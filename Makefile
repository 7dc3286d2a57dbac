# mfabric: the two set-up commands are `make demo` and `make test` (see README.md).
#
#   make demo    install deps, build Release, run the main job on its built-in default (the cost
#                comparison, then one simulated iteration of the paper's main job)
#   make test    install deps, build Release with -Werror, run the whole suite; then the same
#                suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench   Release benchmarks (results go in docs/performance.md)
#   make format  clang-format every C++ file
#   make build   Release build only

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
RELEASE_DIR := build/release
SANITIZE_DIR := build/sanitize
CMAKE_COMMON := -G Ninja -DMFABRIC_WERROR=ON

.PHONY: all deps build demo test test-release test-sanitize bench format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(RELEASE_DIR) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE_DIR) -j $(JOBS)

demo: build
	./$(RELEASE_DIR)/src/cli/mfabric cost
	@echo
	./$(RELEASE_DIR)/src/cli/mfabric simulate examples/mixtral-8x22b.yaml

test: test-release test-sanitize

test-release: build
	cd $(RELEASE_DIR) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@cmake -S . -B $(SANITIZE_DIR) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug \
	  -DMFABRIC_SANITIZE=address,undefined -DMFABRIC_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

bench: build
	./$(RELEASE_DIR)/bench/mfabric_bench --benchmark_min_time=0.2
	bash bench/scenarios.sh ./$(RELEASE_DIR)/src/cli/mfabric

format:
	@find src tests bench -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	rm -rf build
