# SPDX-License-Identifier: MIT
"""Stand-in for PyTorch, enough for Megatron-LM's argument parsing and the
transformer config classes to import and run on a machine without PyTorch.

No tensor works here: dtypes are plain named objects, the classes that modules
subclass or name in annotations are empty, and the decorators return their
function.  torch.cuda reports the device that tests/megatron/check_args.py
chooses (--capability); torch.distributed is never initialised.
"""

import builtins as _builtins

__version__ = "2.9.0"


class dtype:
    def __init__(self, name, is_floating_point, itemsize):
        self.name = name
        self.is_floating_point = is_floating_point
        self.itemsize = itemsize

    def __repr__(self):
        return "torch." + self.name


float16 = half = dtype("float16", True, 2)
bfloat16 = dtype("bfloat16", True, 2)
float32 = float = dtype("float32", True, 4)
float64 = double = dtype("float64", True, 8)
float8_e4m3fn = dtype("float8_e4m3fn", True, 1)
float8_e5m2 = dtype("float8_e5m2", True, 1)
int8 = dtype("int8", False, 1)
uint8 = dtype("uint8", False, 1)
int16 = short = dtype("int16", False, 2)
int32 = int = dtype("int32", False, 4)
int64 = long = dtype("int64", False, 8)
bool = dtype("bool", False, 1)


class device:
    def __init__(self, type="cpu", index=None):
        if ":" in type:
            type, index = type.split(":")[0], _builtins.int(type.split(":")[1])
        self.type = type
        self.index = index


class Size(tuple):
    pass


class Tensor:
    pass


class Generator:
    pass


def _unavailable(*args, **kwargs):
    raise RuntimeError("the torch stand-in has no tensors")


empty = zeros = ones = full = tensor = cat = stack = chunk = narrow = _unavailable
zeros_like = ones_like = empty_like = equal = all = sum = norm = isnan = _unavailable
exp = erf = tanh = sigmoid = frombuffer = save = load = _unavailable
get_rng_state = set_rng_state = manual_seed = _unavailable


def is_grad_enabled():
    return False


def _decorator(fn=None, *args, **kwargs):
    if callable(fn):
        return fn
    return lambda f: f


compile = _decorator


class no_grad:
    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


enable_grad = inference_mode = no_grad

from . import nn, cuda, distributed, autograd, jit, optim, backends, amp, storage, _C  # noqa: E402

autocast = amp.autocast
