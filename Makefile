# The README's two commands: `make run` and `make test`. Both install what is missing first.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
PORT       ?= 8080
SOAK_SECONDS     ?= 60
OVERLOAD_SECONDS ?= 60

.PHONY: all deps build build-asan build-tsan run test test-unit test-tsan bench soak overload clean \
        format

all: build

deps:
	@./scripts/install-deps.sh

# The release build has the binaries, benchmarks and integration tests; unit tests are compiled
# once, in the sanitizer build (line tables only: enough for sanitizer stack traces).
$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOXSERVE_BUILD_UNIT_TESTS=OFF \
	  $(CMAKE_ARGS)

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
	  -DVOXSERVE_SANITIZE=ON -DVOXSERVE_BUILD_BENCH=OFF $(CMAKE_ARGS)

# ThreadSanitizer only for the concurrency core (scheduler): Debian's boost/absl are not built
# with TSan, so whole-server runs would report their internals.
$(TSAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
	  -DVOXSERVE_SANITIZE_THREAD=ON \
	  -DVOXSERVE_BUILD_BENCH=OFF $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

build-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target unit_scheduler_tests

# Serves on 127.0.0.1:$(PORT) with the embedded espeak-ng engine; Ctrl-C drains and stops.
# Builds only the server, not the tests.
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target voxserve
	./$(BUILD)/bin/voxserve --host 127.0.0.1 --port $(PORT)

# The integration tests against the release binaries; every test (unit and integration) under
# AddressSanitizer + UBSan; the scheduler's tests under ThreadSanitizer.
test: build build-asan build-tsan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-tsan

test-tsan: build-tsan
	cd $(TSAN_BUILD) && ctest --output-on-failure -R unit_scheduler

test-unit: build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

bench: build
	./bench/http_baseline.sh $(BUILD)

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
