# The two commands of the README:
#   make demo    install what is missing, build, run a real MCP server through gander
#   make check   install what is missing, build, run every test tier
# Everything else here is what those two are made of.

BUILD ?= build
JOBS ?= $(shell nproc)
BUILD_TYPE ?= RelWithDebInfo

.PHONY: all deps build demo check unit bench sanitize format format-check clean

all: build

deps:
	scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	scripts/demo.sh $(BUILD)/launcher/gander

check: build
	scripts/check.sh $(BUILD)

unit: build
	ctest --test-dir $(BUILD) -L unit --output-on-failure

bench: build
	GANDER=$(BUILD)/launcher/gander bench/startup.sh

# Unit and integration tiers again under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DGANDER_SANITIZE=ON >/dev/null
	cmake --build $(BUILD)-asan -j$(JOBS)
	ctest --test-dir $(BUILD)-asan -L 'unit|integration' --output-on-failure

SOURCES = $(shell git ls-files '*.cc' '*.h')
format:
	clang-format -i $(SOURCES)
format-check:
	clang-format --dry-run --Werror $(SOURCES)

clean:
	rm -rf $(BUILD) $(BUILD)-asan
