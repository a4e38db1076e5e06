# The two commands of the README:
#   make demo    install what is missing, build, run a real MCP server through gander
#   make check   install what is missing, build, run every test tier
# Everything else here is what those two are made of.

BUILD ?= build
JOBS ?= $(shell nproc)
BUILD_TYPE ?= RelWithDebInfo
# Tests run at once by ctest (make sanitize, make check): most of them wait on sandboxes and
# servers rather than burn a core. Those that share host state run alone (RUN_SERIAL) or under
# a RESOURCE_LOCK (docs/tests.md, "Running in parallel").
TEST_JOBS ?= 3
export TEST_JOBS

.PHONY: all deps build demo check unit bench sanitize format format-check clean install deb

all: build

deps:
	scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	MAKEFLAGS=--no-print-directory cmake --build $(BUILD) -j$(JOBS)

demo: build
	scripts/demo.sh $(BUILD)/launcher/gander

check: build
	scripts/check.sh $(BUILD)

unit: build
	ctest --test-dir $(BUILD) -L unit --output-on-failure -j$(TEST_JOBS)

# `make install` (PREFIX=/usr/local by default; DESTDIR for staging): gander, its collector in
# PREFIX/libexec/gander, profiles, man pages, completions, the systemd user unit.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# `make deb`: gander_VERSION_ARCH.deb in $(BUILD)/ from the build tree (CPack).
deb: build
	cd $(BUILD) && cpack -G DEB >/dev/null && ls -1 $(CURDIR)/$(BUILD)/gander_*.deb

bench: build
	GANDER=$(BUILD)/launcher/gander bench/startup.sh

# Unit and integration tiers again under AddressSanitizer and UndefinedBehaviorSanitizer: all
# of gander's code paths, not every attempt twice. Left out, as they run no gander code that
# the tier does not run otherwise (they still run in the normal tiers):
#   Escape/EscapeTest   every attempt again in Audit/AuditEscapeTest, same users and flags
#                       plus --audit-log (its unsandboxed controls run no gander code at all)
#   Gvisor/             gander's side of an attempt under runsc is the same for every attempt;
#                       gvisor.backend runs it (both users, audit log, lifecycle) under ASan
#   Cgroup/             the run's cgroup with a 64 MiB memory limit: the sandbox's init, an
#                       ASan copy of gander, lives in that cgroup and its allocator's mappings
#                       fail there (ENOMEM), so the init dies before the extension runs. The
#                       cgroup code (create, enter, kill, remove) still runs under ASan in
#                       every as-root run of this tier (the default profile's pids limit)
# (fuzz.relay is not in this tree: relay_fuzz carries ASan and UBSan in the normal tree.)
SANITIZE_SKIP = ^(Escape/EscapeTest\.|Gvisor/|Cgroup/)
# Debug info -g1 (line tables): all that the sanitizers' reports need, and a third less to
# compile and link than -g.
sanitize: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
	  -DGANDER_SANITIZE=ON -DGANDER_LLD=ON >/dev/null
	cmake --build $(BUILD)-asan -j$(JOBS)
	ctest --test-dir $(BUILD)-asan -L 'unit|integration' -E '$(SANITIZE_SKIP)' --output-on-failure \
	  -j$(TEST_JOBS) $(CTEST_FLAGS)

SOURCES = $(shell git ls-files '*.cc' '*.h')
format:
	clang-format -i $(SOURCES)
format-check:
	clang-format --dry-run --Werror $(SOURCES)

clean:
	rm -rf $(BUILD) $(BUILD)-asan
