"""Audio features show in Jupyter as images; other tensors keep their text repr."""

from __future__ import annotations

import gc

import numpy as np

import paddle_hl as paddle
from paddle_hl.framework import tensor as tensor_mod

try:
    import matplotlib  # noqa: F401

    _HAVE_MPL = True
except ImportError:
    _HAVE_MPL = False


def test_feature_tensors_render_as_images_in_jupyter():
    wave = paddle.to_tensor(np.random.default_rng(0).standard_normal((2, 4000)).astype("float32"))
    for layer in (paddle.audio.features.Spectrogram(n_fft=256),
                  paddle.audio.features.LogMelSpectrogram(sr=8000, n_fft=256, n_mels=32),
                  paddle.audio.features.MFCC(sr=8000, n_mfcc=13, n_fft=256, n_mels=32)):
        out = layer(wave)
        html = out._repr_html_()
        assert type(layer).__name__ in html and str(list(out.shape)) in html
        if _HAVE_MPL:
            assert "data:image/png;base64," in html
        else:  # without matplotlib the view says how to get the image
            assert "install matplotlib" in html
    assert paddle.ones([2])._repr_html_() is None  # other tensors keep the text repr
    before = len(tensor_mod._HTML_VIEWS)
    del out, html
    gc.collect()
    assert len(tensor_mod._HTML_VIEWS) < before  # the view leaves with its tensor
