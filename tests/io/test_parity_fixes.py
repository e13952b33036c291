"""DataLoader collation dtypes of Python and NumPy scalars, against Paddle 2.6.2."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl

CASES = {
    "int": [1, 2, 3, 4],
    "float": [1.5, 2.5, 3.5, 4.5],
    "bool": [True, False, True, False],
    "np.int32": [np.int32(1), np.int32(2), np.int32(3), np.int32(4)],
    "np.int16": [np.int16(1), np.int16(2), np.int16(3), np.int16(4)],
    "np.uint8": [np.uint8(1), np.uint8(2), np.uint8(3), np.uint8(4)],
    "np.float32": [np.float32(1), np.float32(2), np.float32(3), np.float32(4)],
    "np.float16": [np.float16(1), np.float16(2), np.float16(3), np.float16(4)],
    "np.float64": [np.float64(1), np.float64(2), np.float64(3), np.float64(4)],
    "int+np.int32": [1, np.int32(2), 3, np.int32(4)],
    "float+int": [1.0, 2, 3.0, 4],
    "tuples": [(np.int32(1), np.float32(2.0)), (np.int32(3), np.float32(4.0))] * 2,
    "dicts": [{"a": np.int32(1), "b": 2.0}, {"a": np.int32(3), "b": 4.0}] * 2,
}


def _describe(batch):
    if isinstance(batch, dict):
        return {k: _describe(v) for k, v in sorted(batch.items())}
    if isinstance(batch, (list, tuple)):
        return [_describe(v) for v in batch]
    return (str(batch.dtype), list(batch.shape), batch.numpy().tolist())


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(CASES))
def test_collate_scalars_dtype_parity(pd, case):
    items = CASES[case]
    out = {}
    for lib in (pd, paddle_hl):
        class _Items(lib.io.Dataset):
            def __len__(self):
                return len(items)

            def __getitem__(self, i):
                return items[i]

        out[lib.__name__] = _describe(next(iter(lib.io.DataLoader(_Items(), batch_size=2))))
    assert out["paddle_hl"] == out["paddle"]
