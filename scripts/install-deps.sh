#!/usr/bin/env bash
# Installs what memplan needs and the machine lacks; safe to run again.
#   scripts/install-deps.sh            Debian packages for building and testing
#   scripts/install-deps.sh --python   also .venv with scripts/requirements.txt
#   scripts/install-deps.sh --fuzz     also clang and its runtimes (libFuzzer)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  coinor-libcbc-dev libboost-graph-dev libcli11-dev nlohmann-json3-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libonnx-testdata libjemalloc-dev
  python3 python3-venv
)
want_python=0
for arg in "$@"; do
  case "$arg" in
    --python) want_python=1 ;;
    --fuzz) packages+=(clang libclang-rt-dev) ;;
    *) echo "install-deps: unknown option $arg (expected --python or --fuzz)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ((want_python)); then
  if [ ! -x .venv/bin/python ] || ! cmp -s scripts/requirements.txt .venv/.requirements; then
    echo "install-deps: setting up .venv from scripts/requirements.txt"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r scripts/requirements.txt
    cp scripts/requirements.txt .venv/.requirements
  fi
fi
