# Lifeline Zero in a container: the four binaries (engine, selfplay, train, eval) and the
# scripts they call, on a slim Debian. The cluster manifests (deploy/k8s, deploy/k8s-s3) and
# the Slurm scripts' container notes name the image this builds:
#
#   docker build -t lifeline-zero:0.1.0 .                                  (or podman build)
#   docker build -t lifeline-zero:0.1.0-cuda --build-arg FEATURES=cuda .   (the trainer's)
#
# then push it where the cluster pulls from (or `kind load docker-image lifeline-zero:0.1.0`)
# and, for a registry, prefix the manifests' image with it. The CUDA variant links burn's CUDA
# backend against an LLVM SDK from PyPI (scripts/cuda-sdk.sh, docs/crates.md) and needs the
# NVIDIA container runtime to run.

# Build: the whole workspace in release, from the lock file.
FROM rust:1.95-slim-bookworm AS build
ARG FEATURES=""
# cudarc binds the CUDA 13.0 driver API; no CUDA toolkit is needed to build.
ENV CUDARC_CUDA_VERSION=13000
WORKDIR /src
COPY . .
# With FEATURES=cuda: python3 and a venv for the LLVM SDK, placed where the build looks for it.
# hadolint ignore=DL3008
RUN if [ "$FEATURES" = cuda ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends python3 python3-venv \
      && rm -rf /var/lib/apt/lists/* \
      && scripts/cuda-sdk.sh; \
    fi
RUN cargo build --release --locked -p engine -p eval \
 && cargo build --release --locked -p selfplay -p train ${FEATURES:+--features "$FEATURES"}

# Run: the binaries and what they call (python3 with numpy for scripts/check_shard.py; the
# ONNX export also needs `pip install onnx onnxruntime`), as an unprivileged user.
FROM debian:bookworm-slim
# Unpinned on purpose: Debian stable's packages change only by security fixes, which an image
# should take, and pins would break at each point release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3 python3-numpy \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1000 lifeline
COPY --from=build /src/target/release/engine /src/target/release/selfplay \
     /src/target/release/train /src/target/release/eval /usr/local/bin/
COPY scripts/ /opt/lifeline-zero/scripts/
COPY configs/ /opt/lifeline-zero/configs/
USER 1000:1000
WORKDIR /home/lifeline
CMD ["train", "--help"]
