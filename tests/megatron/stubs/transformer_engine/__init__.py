# SPDX-License-Identifier: MIT
"""Stand-in for Transformer Engine: installed, at the version in
$MEGATRON_TE_VERSION (set by tests/megatron/check_args.py --te-version), with
no kernels.  Megatron-LM reads the version to decide which features it allows."""

import os

__version__ = os.environ.get("MEGATRON_TE_VERSION", "2.10.0")
