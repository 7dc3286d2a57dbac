# mfabric: the two set-up commands are `make demo` and `make test` (see README.md).
#
#   make demo    install deps, build the Release binary, run the main job on its built-in
#                default: `mfabric compare`, the paper's evaluation in its quick subset
#                (Mixtral 8x22B and 8x7B at 100G and 400G on 3 fabrics, 1024 GPUs; about 110 s
#                on 2 cores), table on stdout, report in build/compare/report.html; the
#                full evaluation is `mfabric compare --full` (about 21 minutes)
#   make test    install deps, build Release with -Werror, run the whole suite; then the same
#                suite built by clang with AddressSanitizer + UndefinedBehaviorSanitizer, in the
#                fuzzing build, which also replays fuzz/regressions/ and smoke-runs every harness
#   make fuzz    build the libFuzzer harnesses and fuzz each for FUZZ_SECONDS (default 60) or
#                FUZZ_RUNS executions; FUZZ_HARNESSES picks some (docs/reliability.md)
#   make bench   Release benchmarks (results go in docs/performance.md)
#   make validate  regenerate the generated tables of docs/validation.md (long: see
#                docs/performance.md); VALIDATE_ONLY=script.sh for one script's tables
#   make plugins-doc  regenerate docs/plugins.md from the registries (`mfabric plugins`)
#   make calibrations  refit data/calibrations/h200-measured.yaml to data/measurements/
#   make format  clang-format every C++ file
#   make build   Release build only

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
RELEASE_DIR := build/release
# The sanitizer build is the fuzzing build (clang, ASan + UBSan, libFuzzer coverage), so that
# `make test` compiles the project twice, not three times. -O1 keeps fuzzing and the suite fast.
FUZZ_DIR := build/fuzz
CMAKE_COMMON := -G Ninja -DMFABRIC_WERROR=ON
# -gline-tables-only: file and line in sanitizer and fuzzer stack traces, at a fraction of the
# compile time of full debug information.
CMAKE_FUZZ := $(CMAKE_COMMON) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" -DMFABRIC_BUILD_FUZZ=ON -DMFABRIC_BUILD_BENCH=OFF
FUZZ_SECONDS ?=
FUZZ_RUNS ?=
FUZZ_HARNESSES ?=

.PHONY: all deps build demo test test-release test-sanitize fuzz bench validate plugins-doc calibrations format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(RELEASE_DIR) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE_DIR) -j $(JOBS)

# The demo needs only the binary, not the tests and benchmarks.
DEMO_DIR := build/compare
demo: deps
	@cmake -S . -B $(RELEASE_DIR) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE_DIR) -j $(JOBS) --target mfabric
	./$(RELEASE_DIR)/src/cli/mfabric compare --out $(DEMO_DIR)
	@echo 'open the report: xdg-open $(DEMO_DIR)/report.html'

test: test-release test-sanitize

test-release: build
	cd $(RELEASE_DIR) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@cmake -S . -B $(FUZZ_DIR) $(CMAKE_FUZZ) >/dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS)
	cd $(FUZZ_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

fuzz: deps
	@cmake -S . -B $(FUZZ_DIR) $(CMAKE_FUZZ) >/dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target mfabric_fuzz_harnesses
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) bash fuzz/fuzz.sh run $(FUZZ_DIR) $(FUZZ_HARNESSES)

bench: build
	./$(RELEASE_DIR)/bench/mfabric_bench --benchmark_min_time=0.2
	bash bench/scenarios.sh ./$(RELEASE_DIR)/src/cli/mfabric

validate: build
	bash scripts/validation/update.sh ./$(RELEASE_DIR)/src/cli/mfabric

plugins-doc: build
	./$(RELEASE_DIR)/src/cli/mfabric plugins --format markdown > docs/plugins.md

calibrations: build
	bash scripts/fit-calibrations.sh ./$(RELEASE_DIR)/src/cli/mfabric

format:
	@find src tests bench -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	rm -rf build
