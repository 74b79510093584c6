# SPDX-License-Identifier: MIT
"""Stand-in for torch.nn.functional: activations as plain functions, so that
configs can hold them and compare them (F.silu is F.silu)."""


def _activation(name):
    def f(input, *args, **kwargs):
        raise RuntimeError("the torch stand-in has no tensors (%s)" % name)

    f.__name__ = f.__qualname__ = name
    return f


gelu = _activation("gelu")
silu = _activation("silu")
relu = _activation("relu")
sigmoid = _activation("sigmoid")
tanh = _activation("tanh")
softmax = _activation("softmax")
log_softmax = _activation("log_softmax")
softplus = _activation("softplus")
glu = _activation("glu")
linear = _activation("linear")
dropout = _activation("dropout")
cross_entropy = _activation("cross_entropy")
layer_norm = _activation("layer_norm")
rms_norm = _activation("rms_norm")
pad = _activation("pad")
grouped_mm = _activation("grouped_mm")
scaled_dot_product_attention = _activation("scaled_dot_product_attention")
