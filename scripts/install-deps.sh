#!/usr/bin/env bash
# Installs what gander's build, demo and tests need on Debian 12, and only what is missing:
# Debian packages with apt-get, the MCP servers of the test corpus with `npm ci`.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config git lld  # lld: the linker (CMakeLists.txt, GANDER_LLD)
  libseccomp-dev libcap-dev libyaml-cpp-dev libspdlog-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libsimdjson-dev prometheus-cpp-dev
  util-linux iproute2 procps bc curl jq openssl ca-certificates
  bubblewrap firejail runsc hyperfine prometheus python3-yaml clang-format
  ripgrep socat  # the srt (sandbox-runtime) column of bench/startup.sh and bench/overhead.py
  clang libclang-rt-14-dev  # libFuzzer for tests/fuzz (relay_fuzz)
  # man pages (docs/CMakeLists.txt), the package's checks (tests/packaging)
  go-md2man help2man man-db lintian dpkg-dev
  zsh fish apparmor  # the completions and the AppArmor profile parsed (install_tree_test.sh)
  # the install phase for uvx/pipx run (a venv + pip in the cache) and its local test index
  python3 python3-venv python3-pip-whl python3-setuptools-whl python3-wheel-whl
)
# Node.js runs the MCP servers and the MCP client; any node >= 18 with npm will do.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

tests/e2e/install.sh
