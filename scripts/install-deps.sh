#!/usr/bin/env bash
# Installs the Debian packages mfabric needs to build, test and benchmark. Idempotent: packages
# already present are skipped, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  clang-format
  clang libclang-rt-dev  # the clang build of make test and make fuzz: libFuzzer, ASan, UBSan
  libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libprotobuf-dev protobuf-compiler zlib1g-dev libeigen3-dev
  libgrpc++-dev protobuf-compiler-grpc  # controller/: the region controller's gRPC API (optional)
  openssl  # the controller's tests make their own CA and TLS certificates
  libgtest-dev libgmock-dev libbenchmark-dev
  liblemon-dev libglpk-dev  # control/: matchings (LEMON) and the exact planner (GLPK)
  libopenmpi-dev openmpi-bin  # study/: sweeps on MPI ranks (mpirun -n R mfabric sweep)
  gnuplot-nox  # report.html of mfabric compare: the plots, as SVG (docs/compare.md)
  chromium fonts-dejavu-core  # renders report.html headless in its test
  time python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "install-deps: missing packages (${missing[*]}) and not root; install them or run as root" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
