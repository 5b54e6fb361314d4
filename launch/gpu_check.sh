#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU, from the repository root, in under 8 minutes
# (the install at most 1, the bench about 6.5, cut at 7):
#   1. installs jax's CUDA 12 extra (the `gpu` extra of pyproject.toml) into the active Python;
#   2. stops (printing `sog doctor --config leduc`) if JAX sees no GPU;
#   3. `sog bench gpu`: `sog doctor` (JAX's devices, the CUDA / cuDNN versions it sees, Ray's
#      resources, where each role lands), the inference batch sweep (1 to 4096; MLP 6 x 2048, ResNet 19 x 256),
#      learner steps/s for hunl.yaml's network, a 5-minute `sog train --config leduc` with
#      inference and learner on the GPU; all figures in one JSON file.
#
#   launch/gpu_check.sh [OUT.json]        (default gpu_check.json; SKIP_INSTALL=1 skips step 1)
set -euo pipefail
out="${1:-gpu_check.json}"
python="${PYTHON:-python}"

if [[ "${SKIP_INSTALL:-0}" != 1 ]]; then      # no package index reachable: go on with what is installed
    timeout 60 "$python" -m pip install --quiet -U "jax[cuda12]" \
        || echo "gpu_check: could not install jax[cuda12]; using the installed jax" >&2
fi
if ! "$python" -c 'import jax, sys; sys.exit(0 if jax.default_backend() == "gpu" else 1)'; then
    timeout 120 "$python" -m launch.cli doctor --config leduc >&2 || true
    echo "gpu_check: JAX sees no GPU (its devices and Ray's resources above)" >&2
    exit 1
fi
# bench gpu runs `sog doctor` first and writes its object into the same file
timeout 420 "$python" -m launch.cli bench gpu --seconds 0.3 --learner-steps 50 --train-minutes 5 --out "$out" \
    > /dev/null
echo "gpu_check: figures in $out" >&2
