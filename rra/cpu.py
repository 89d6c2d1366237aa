"""CPU settings for a training process, applied before torch loads (train.py calls `for_training`).

rra/__init__ makes OpenMP threads sleep as soon as they wait (OMP_WAIT_POLICY=PASSIVE): right for
answering beside a SPARQL store or an LLM server on the same cores. Training is the opposite case:
one process computing without pause, hundreds of small ops a step, each a parallel region whose
threads PASSIVE puts to sleep and wakes again through the kernel. On the built-in default run's
first 40 steps (2 cores) that was 26,000 futex calls a step and 77 s; with the threads spinning
a while before they sleep, 52 s, and with glibc keeping freed memory for reuse instead of handing
it back (and faulting it in again) at every step, 42 s (docs/retriever.md, "Training on a CPU").
"""
from __future__ import annotations

import ctypes
import os
import sys

# libgomp spins this many times (~0.1-0.5 s, by CPU) before a waiting thread sleeps; it overrides
# OMP_WAIT_POLICY's own count. Bounded, unlike OMP_WAIT_POLICY=ACTIVE (minutes of spinning).
TRAINING_SPIN_COUNT = "30000000"
# glibc mallopt parameters (malloc.h) and the values training uses
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_MALLOC = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 1 << 30, _M_TOP_PAD: 1 << 30}


def for_training() -> dict[str, str]:
    """Spin-then-sleep OpenMP waits and a malloc that keeps freed memory, for this process.
    An explicit GOMP_SPINCOUNT in the environment wins; RRA_CPU_TUNING=0 leaves both alone.
    Returns what was set (logged by the caller). Must run before torch is imported for the
    OpenMP part; the malloc part applies to later allocations either way (glibc only)."""
    if os.environ.get("RRA_CPU_TUNING", "1") == "0":
        return {}
    done = {}
    if "torch" in sys.modules:
        done["openmp"] = "torch already loaded: unchanged"
    elif "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = done["GOMP_SPINCOUNT"] = TRAINING_SPIN_COUNT
    if sys.platform.startswith("linux"):
        try:
            mallopt = ctypes.CDLL("libc.so.6").mallopt
        except (OSError, AttributeError):  # musl and others: no glibc mallopt
            return done
        if all(mallopt(k, v) == 1 for k, v in _MALLOC.items()):
            done["malloc"] = "glibc: mmap above 32 MiB, trim above 1 GiB"
    return done
