# The README's commands. Each one installs what is missing, configures and builds first.
#   make        build (release) into build/
#   make demo   run the bundled examples on whatever devices exist
#   make test   run every test (unit, C ABI, install, ABI baseline, Python, Rust)
#   make bench  run the benchmarks and write benchmarks/results/
#   make bindings  regenerate the Python mirror of the C headers (capi/bindings/generate.py)
JOBS ?= $(shell nproc)
PRESET ?= release
BUILD := build
WERROR ?= $(or $(NUBO_WERROR),OFF)

.PHONY: all deps configure build demo test bench bindings format format-check asan tsan clean

all: build

deps:
	@.ci/install-deps

configure: deps
	@cmake --preset $(PRESET) -DNUBO_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@examples/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --output-junit ctest-results.xml

bench: build
	@benchmarks/run.sh $(BUILD)

bindings:
	@python3 capi/bindings/generate.py write

# Sanitizer builds: ASan+UBSan for everything, TSan for the threaded parts.
asan tsan: deps
	@cmake --preset $@ -DNUBO_WERROR=$(WERROR) >/dev/null
	@cmake --build build-$@ -j $(JOBS)
	@cd build-$@ && TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp $$TSAN_OPTIONS" \
	  ctest --output-on-failure -j $(JOBS) -LE no-$@

FORMAT_FILES = $(shell git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.h' '*.c' '*.cu' '*.cuh')
format:
	@clang-format -i $(FORMAT_FILES)

format-check: deps
	@clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	@rm -rf build build-*
