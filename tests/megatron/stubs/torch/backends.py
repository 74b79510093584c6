# SPDX-License-Identifier: MIT
"""Stand-in for torch.backends."""


class _Namespace:
    pass


cuda = _Namespace()
cuda.matmul = _Namespace()
cuda.matmul.allow_bf16_reduced_precision_reduction = True
cuda.matmul.allow_tf32 = False
cudnn = _Namespace()
cudnn.allow_tf32 = True
