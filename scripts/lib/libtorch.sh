# Where a CUDA machine's LibTorch is: sourced by scripts/setup.sh.

# The CMAKE_PREFIX_PATH entry for find_package(Torch): $LIBTORCH (an unpacked LibTorch zip, or any
# directory with share/cmake/Torch) first, else the pip wheel's torch.utils.cmake_prefix_path.
# Prints nothing when neither is there (the Debian libtorch-dev path).
libtorch_cmake_prefix() {
  if [ -n "${LIBTORCH:-}" ]; then
    if [ -f "$LIBTORCH/share/cmake/Torch/TorchConfig.cmake" ]; then
      echo "$LIBTORCH/share/cmake"
      return
    fi
    echo "setup: LIBTORCH=$LIBTORCH has no share/cmake/Torch/TorchConfig.cmake" >&2
    exit 1
  fi
  command -v python3 >/dev/null || return 0
  python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true
}

# "torch 2.11.0, CUDA 13.0" for the wheel; the directory for $LIBTORCH.
libtorch_describe() {
  if [ -n "${LIBTORCH:-}" ]; then echo "LIBTORCH=$LIBTORCH"; return; fi
  python3 -c 'import torch; print(f"torch {torch.__version__}, CUDA {torch.version.cuda or \"none\"}")'
}
