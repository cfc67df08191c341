"""llama.cpp built from the llama-cpp-python sdist, for the scripts that compare with its own code
(make_iquant_reference.py, bench/run_dequant_bench.py --ggml). Never used by the product or the
suite: the suite reads the files these scripts wrote.

  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36
"""
import ctypes
import glob
import os
import shutil
import subprocess
import tarfile

import numpy as np


def build(sdist, work, targets=("llama-quantize", "llama-imatrix", "ggml-base")):
    """Extracts the sdist's vendored llama.cpp under `work` (once) and builds `targets` there, through
    ccache where it is found. Returns the build folder (tools and libraries in its bin/)."""
    src = os.path.join(work, "src")
    if not os.path.isdir(src):
        with tarfile.open(sdist) as t:
            t.extractall(work, members=[m for m in t.getmembers() if "/vendor/llama.cpp/" in m.name])
        os.rename(glob.glob(os.path.join(work, "*", "vendor", "llama.cpp"))[0], src)
    out = os.path.join(work, "build")
    launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    subprocess.run(["cmake", "-S", src, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF",
                    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF", *launcher],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", out, "-j2", "--target", *targets], check=True, stdout=subprocess.DEVNULL)
    return out


def ggml_to_float(lib_path):
    """A function (type id, block bytes, element count) -> float32 array that runs ggml's own
    `ggml_get_type_traits(type)->to_float` from libggml-base (ggml.h's struct ggml_type_traits)."""
    lib = ctypes.CDLL(lib_path)

    class Traits(ctypes.Structure):
        _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64), ("blck_size_interleave", ctypes.c_int64),
                    ("type_size", ctypes.c_size_t), ("is_quantized", ctypes.c_bool),
                    ("to_float", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)),
                    ("from_float_ref", ctypes.c_void_p)]

    lib.ggml_get_type_traits.restype = ctypes.POINTER(Traits)
    lib.ggml_get_type_traits.argtypes = [ctypes.c_int]

    lib.ggml_type_name.restype = ctypes.c_char_p
    lib.ggml_type_name.argtypes = [ctypes.c_int]

    def decodes(type_id, name):
        """Whether this build has type_id as `name` (ggml spells it "q4_K", "iq2_xxs") with a to_float. The id
        must be below the build's GGML_TYPE_COUNT (43 in 0.3.36's llama.cpp): ggml does not check."""
        return lib.ggml_type_name(type_id).decode().lower() == name.lower() and \
            bool(lib.ggml_get_type_traits(type_id).contents.to_float)

    def decode(type_id, blocks, n, out=None):
        src = np.ascontiguousarray(np.frombuffer(blocks, np.uint8))
        out = np.empty(n, np.float32) if out is None else out
        lib.ggml_get_type_traits(type_id).contents.to_float(src.ctypes.data, out.ctypes.data, n)
        return out
    decode.decodes = decodes
    return decode
