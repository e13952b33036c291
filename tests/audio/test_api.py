"""The paddle_hl.audio namespaces have every Paddle 2.6 name with Paddle's signature (the checks
of tests/test_api_coverage.py, run on the audio namespaces)."""

from __future__ import annotations

import pytest

from tests import test_api_coverage as coverage

AUDIO_NAMESPACES = ["paddle_hl.audio", "paddle_hl.audio.backends", "paddle_hl.audio.datasets",
                    "paddle_hl.audio.features", "paddle_hl.audio.functional"]


@pytest.mark.parametrize("ns", AUDIO_NAMESPACES)
def test_audio_names_exist(ns):
    coverage.test_names_exist(ns)


@pytest.mark.parametrize("ns", AUDIO_NAMESPACES)
def test_audio_signatures_match(ns):
    coverage.test_signatures_match(ns)
