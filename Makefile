# The README's two commands: `make run` and `make test`. Both install what is missing first.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 10
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# ONNX=OFF: espeak-ng only; no ONNX Runtime SDK fetched or linked (Piper/Kokoro models refused).
ONNX       ?= ON
PORT       ?= 8080
SOAK_SECONDS     ?= 60
OVERLOAD_SECONDS ?= 60

FORCE:
.PHONY: all deps build build-release build-asan build-tsan build-fuzz run test test-asan test-unit \
        test-tsan test-soak fuzz test-deploy deploy-prepare bench soak overload clean format \
        cosyvoice-bundle

all: build

deps:
	@VOXSERVE_ONNX=$(ONNX) ./scripts/install-deps.sh

# The release build has the binaries, benchmarks and integration tests; unit tests are compiled
# once, in the sanitizer build (line tables only: enough for sanitizer stack traces).
$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOXSERVE_BUILD_UNIT_TESTS=OFF \
	  -DVOXSERVE_ONNX=$(ONNX) $(CMAKE_ARGS)

# The sanitizer trees compile with Debian's clang-14 (libstdc++, linking Debian's g++-built
# libraries): at -O0 it compiles this code in about half g++'s time (docs/build.md), and g++
# still gates warnings in the release tree. The ASan tree is also the libFuzzer tree: its
# libraries carry libFuzzer's coverage instrumentation, so the fuzz targets (make build-fuzz)
# link the same objects the tests run instead of a third compile of every library.
SAN_COMPILERS = CC=clang-14 CXX=clang++-14
# A sanitizer tree first configured with g++ (before the move) is configured afresh: CMake keeps
# the compiler a tree was first configured with.
gxx_tree = $(if $(wildcard $(1)/CMakeCache.txt),$(if $(shell grep -s '^CMAKE_CXX_COMPILER:' \
  $(1)/CMakeCache.txt | grep clang),,$(1)))
SAN_FLAGS = -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
            -DVOXSERVE_BUILD_BENCH=OFF -DVOXSERVE_ONNX=$(ONNX)
$(ASAN_BUILD)/build.ninja: $(if $(call gxx_tree,$(ASAN_BUILD)),FORCE) | deps
	$(if $(call gxx_tree,$(ASAN_BUILD)),rm -rf $(ASAN_BUILD))
	$(SAN_COMPILERS) cmake -S . -B $(ASAN_BUILD) -G Ninja $(SAN_FLAGS) -DVOXSERVE_SANITIZE=ON \
	  -DVOXSERVE_FUZZ=ON $(CMAKE_ARGS)

# ThreadSanitizer for the concurrent modules (scheduler, service, transports, client) and the
# server itself; what Debian's uninstrumented libraries do inside is suppressed in tests/tsan.supp.
$(TSAN_BUILD)/build.ninja: $(if $(call gxx_tree,$(TSAN_BUILD)),FORCE) | deps
	$(if $(call gxx_tree,$(TSAN_BUILD)),rm -rf $(TSAN_BUILD))
	$(SAN_COMPILERS) cmake -S . -B $(TSAN_BUILD) -G Ninja $(SAN_FLAGS) \
	  -DVOXSERVE_SANITIZE_THREAD=ON $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

TSAN_TARGETS = unit_scheduler_tests unit_store_tests unit_service_tests unit_transport_tests unit_client_tests \
               voxserve client_integration_tests
build-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TARGETS)

# The fuzz targets, in the ASan tree (its default target leaves them out).
build-fuzz: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target fuzzers

# Serves on 127.0.0.1:$(PORT) with the embedded espeak-ng engine; Ctrl-C drains and stops.
# Builds only the server, not the tests. Pronunciation dictionaries made through the API are kept
# in build/dictionaries (the README's example makes one).
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target voxserve
	./$(BUILD)/bin/voxserve --host 127.0.0.1 --port $(PORT) --dictionaries-dir $(BUILD)/dictionaries

# What CI runs (.ci/run calls `make test`): the release binaries are built (they ship, -O2
# warnings gate, and the soak/overload runs measure them) but every other test runs once, in
# build-asan/ under AddressSanitizer + UBSan; the concurrent modules' unit tests and the
# server-starting integration tests again under ThreadSanitizer; a 60 s soak and overload of the
# release server; a short pass of each fuzz target. The phases run one by one so the time of each
# is printed at the end (scripts/timed-phases.sh), also when one fails.
TEST_PHASES = deps deploy-prepare build-release build-asan build-tsan build-fuzz test-asan test-tsan test-soak fuzz \
              test-deploy
test:
	@./scripts/timed-phases.sh $(TEST_PHASES)

test-asan: build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE '^fuzz$$'

# The release tree's binaries only (make build also builds its integration test drivers).
build-release: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target voxserve voxctl voxbench

# bench/soak.py's soak (70 % of capacity, mixed protocols) and overload (10x) CTest entries against
# the release binary, SOAK_SECONDS / OVERLOAD_SECONDS each.
test-soak: build-release
	cd $(BUILD) && SOAK_SECONDS=$(SOAK_SECONDS) OVERLOAD_SECONDS=$(OVERLOAD_SECONDS) \
	  ctest --output-on-failure -L '^(soak|overload)$$'

# deploy/ for real: the image built from its Dockerfile, compose with nginx and Prometheus up,
# failover and drain under voxbench load through nginx (tests/deploy/run-e2e.sh starts dockerd).
test-deploy: build-release
	@cat $(BUILD)/deploy-prepare.log 2>/dev/null || true
	tests/deploy/run-e2e.sh $(BUILD)

# The half of test-deploy that is downloads, not compiles (dockerd, the debootstrapped base
# image, the stand-in images, the image's toolchain stage), started in the background so that it
# overlaps the build phases; test-deploy waits for it (a lock) and prints its log. On a new
# machine that is most of test-deploy's time.
deploy-prepare:
	@mkdir -p $(BUILD)
	@(tests/deploy/run-e2e.sh --prepare $(BUILD) > $(BUILD)/deploy-prepare.log 2>&1 &)
	@echo "deploy-prepare: running in the background, log in $(BUILD)/deploy-prepare.log"

# Reports go to files (log_path) so a race inside a server the tests started fails the run too,
# even when the test itself passed.
# Not here: test_lifecycle and test_grpc_errors, whose drain tests size their work (30 s of
# audio against fixed deadlines) for uninstrumented speed; TSan's slowdown makes them time out.
TSAN_TESTS = ^unit_(scheduler|store|service|transport|client)$$|^integration_(rest_api|streaming|websocket|grpc_api)$$|^client_integration$$
test-tsan: build-tsan
	rm -rf $(TSAN_BUILD)/tsan-reports && mkdir -p $(TSAN_BUILD)/tsan-reports
	cd $(TSAN_BUILD) && \
	  TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp second_deadlock_stack=1 log_path=$(CURDIR)/$(TSAN_BUILD)/tsan-reports/tsan" \
	  ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'; status=$$?; \
	if ls tsan-reports/tsan.* >/dev/null 2>&1; then \
	  cat tsan-reports/tsan.*; echo "ThreadSanitizer reported the above"; exit 1; fi; \
	exit $$status

# Each fuzz target FUZZ_SECONDS seconds after replaying its corpus (tests/fuzz/corpus/<target>).
fuzz: build-fuzz
	cd $(ASAN_BUILD) && FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --output-on-failure -j $(JOBS) -L fuzz

test-unit: build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

bench: build
	./bench/http_baseline.sh $(BUILD)

# A real-dimension CosyVoice2 bundle with random weights (~0.5 B LLM parameters, ~3 GB) for the
# CosyVoice benchmarks; too big and slow for the tests, which build a tiny one. Needs an upstream
# checkout: VOXSERVE_COSYVOICE_REF (default ../shared/oracles/CosyVoice).
COSYVOICE_REF    ?= $(or $(VOXSERVE_COSYVOICE_REF),$(abspath ../shared/oracles/CosyVoice))
COSYVOICE_BUNDLE ?= $(BUILD)/cosyvoice2-random-real
cosyvoice-bundle:
	VOXSERVE_COSYVOICE_REF=$(COSYVOICE_REF) /usr/bin/python3 tools/cosyvoice_export/export.py \
	  --random-weights --size real --out $(COSYVOICE_BUNDLE)

# bench/soak.py: mixed REST/SSE/WebSocket/gRPC load at 70 % of the measured capacity (errors,
# RSS and fd slopes, latency drift), and 10x capacity over REST (429s, health, peak RSS).
soak: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target voxserve voxbench
	/usr/bin/python3 bench/soak.py soak --build $(BUILD) --seconds $(SOAK_SECONDS)

overload: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target voxserve voxbench
	/usr/bin/python3 bench/soak.py overload --build $(BUILD) --seconds $(OVERLOAD_SECONDS)

format:
	find src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
