#!/usr/bin/env bash
# Places an LLVM SDK from PyPI where burn's CUDA backend looks for one, so that
# `cargo build --features train/cuda` builds with no network at all.
#
#   scripts/cuda-sdk.sh            install (idempotent: a second run checks and does nothing)
#   scripts/cuda-sdk.sh --check    only say whether the SDK is in place (exit 1 if not)
#
# Why: burn 0.22's CUDA backend (cubecl-cuda) depends, not optionally, on cubecl-llvm, whose
# build-dependency tracel-llvm-bundler downloads an LLVM bundle from a release page at build
# time unless `${XDG_DATA_HOME:-~/.local/share}/tracel/tracel-llvm-<version>/.tracel-llvm-installed`
# exists. PyPI's mlc-llvm-static (+ -extra-targets, for NVPTX) is an LLVM static SDK of the same
# major and minor version with an `llvm-config` that supports `--link-static`; its bin, lib and
# include linked into that directory, with the marker, are what the bundler's build script uses.
#
# The bundler's version is read from Cargo.lock, so a lock update that moves it to another LLVM
# stops here with an error instead of building against a mismatched SDK.
#
# Environment: LIFELINE_LLVM_VENV (default ~/.cache/lifeline-zero/llvm-sdk) is the venv the SDK
# is installed into; XDG_DATA_HOME as the bundler reads it.
set -euo pipefail
cd "$(dirname "$0")/.."

MLC_VERSION="23.1.1.post0"   # LLVM 23.1, the bundler 23.1.0-*'s LLVM

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

bundler="$(awk '/^name = "tracel-llvm-bundler"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
if [ -z "$bundler" ]; then
  echo "cuda-sdk: Cargo.lock names no tracel-llvm-bundler: the CUDA backend no longer needs this SDK (or the lock is not this workspace's)" >&2
  exit 1
fi
# 23.1.0-4 -> 23.1: the LLVM major.minor the bundle is built from.
want_llvm="$(echo "$bundler" | cut -d. -f1-2)"
have_llvm="$(echo "$MLC_VERSION" | cut -d. -f1-2)"
if [ "$want_llvm" != "$have_llvm" ]; then
  echo "cuda-sdk: Cargo.lock's tracel-llvm-bundler $bundler wants LLVM $want_llvm, but this script installs mlc-llvm-static $MLC_VERSION (LLVM $have_llvm): update MLC_VERSION in $0" >&2
  exit 1
fi

target="${XDG_DATA_HOME:-$HOME/.local/share}/tracel/tracel-llvm-$bundler"
marker="$target/.tracel-llvm-installed"
venv="${LIFELINE_LLVM_VENV:-$HOME/.cache/lifeline-zero/llvm-sdk}"

in_place() {
  [ -f "$marker" ] && [ -x "$target/bin/llvm-config" ] \
    && "$target/bin/llvm-config" --version | grep -q "^$have_llvm\." \
    && "$target/bin/llvm-config" --targets-built | grep -qw NVPTX
}

if in_place; then
  echo "cuda-sdk: LLVM $("$target/bin/llvm-config" --version) with NVPTX in place for tracel-llvm-bundler $bundler ($target)"
  exit 0
fi
if [ "$check_only" -eq 1 ]; then
  echo "cuda-sdk: no LLVM SDK for tracel-llvm-bundler $bundler at $target: run $0" >&2
  exit 1
fi

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet \
  "mlc-llvm-static==$MLC_VERSION" "mlc-llvm-static-extra-targets==$MLC_VERSION"
prefix="$("$venv/bin/python" -m mlc_llvm_static.config --prefix)"
for part in bin lib include; do
  if [ ! -d "$prefix/$part" ]; then
    echo "cuda-sdk: mlc-llvm-static $MLC_VERSION has no $part/ under $prefix" >&2
    exit 1
  fi
done

# The marker goes last: a run killed half-way leaves no marker, and the next run redoes it.
rm -f "$marker"
mkdir -p "$target"
for part in bin lib include; do
  ln -sfn "$prefix/$part" "$target/$part"
done
touch "$marker"
if ! in_place; then
  echo "cuda-sdk: $target/bin/llvm-config is not LLVM $have_llvm with NVPTX after the install" >&2
  exit 1
fi
echo "cuda-sdk: LLVM $("$target/bin/llvm-config" --version) with NVPTX placed for tracel-llvm-bundler $bundler ($target -> $prefix)"
