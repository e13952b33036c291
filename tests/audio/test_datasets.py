"""paddle_hl.audio.datasets ESC50 and TESS on small archives in the real layouts (zip files
with the real folder names, metadata file and file naming), built here with soundfile and
downloaded from a local HTTP server through paddle_hl.utils.download; compared with Paddle
2.6.2 reading the same extracted files."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
from paddle_hl.audio import datasets
from paddle_hl.audio._display import AudioSample

import paddle_hl as paddle
from tests.http_server import serve_directory

sf = pytest.importorskip("soundfile")

SR = 8000
ESC_HEADER = "filename,fold,target,category,esc10,src_file,take"
TESS_SPEAKERS = ("OAF", "YAF")
TESS_WORDS = ("back", "bar", "base")
TESS_DIRS = {"angry": "angry", "disgust": "disgust", "fear": "Fear", "happy": "happy",
             "neutral": "neutral", "ps": "Pleasant_surprise", "sad": "Sad"}


def wav_bytes(rng, n=SR // 2, sr=SR, channels=1) -> bytes:
    buf = io.BytesIO()
    data = (0.3 * rng.standard_normal((n, channels))).clip(-1, 1)
    sf.write(buf, data, sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def zip_bytes(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def esc50_zip(rng, sr=SR):
    """ESC-50-master.zip: audio/<fold>-<src>-<take>-<target>.wav and meta/esc50.csv, with
    two clips per fold (targets spread over the 50 classes)."""
    members = {"ESC-50-master/README.md": b"# ESC-50\n", "ESC-50-master/LICENSE": b"CC BY-NC"}
    rows, truth = [ESC_HEADER], []
    for fold in range(1, 6):
        for k in range(2):
            target = (fold * 7 + k * 23) % 50
            src = 100000 + fold * 10 + k
            take = "AB"[k]
            name = f"{fold}-{src}-{take}-{target}.wav"
            members[f"ESC-50-master/audio/{name}"] = wav_bytes(rng, sr=sr)
            category = datasets.ESC50.label_list[target].lower().replace(" ", "_")
            rows.append(f"{name},{fold},{target},{category},False,{src},{take}")
            truth.append((name, fold, target))
    members["ESC-50-master/meta/esc50.csv"] = ("\n".join(rows) + "\n").encode()
    return zip_bytes(members), truth


def tess_zip(rng):
    """TESS_Toronto_emotional_speech_set.zip: <speaker>_<emotion dir>/<speaker>_<word>_<emo>.wav
    """
    members, truth = {}, []
    for spk in TESS_SPEAKERS:
        for emo, d in TESS_DIRS.items():
            for word in TESS_WORDS[: 1 + (len(emo) % 2)]:
                name = f"TESS_Toronto_emotional_speech_set/{spk}_{d}/{spk}_{word}_{emo}.wav"
                members[name] = wav_bytes(rng, n=SR // 4)
                truth.append((name, datasets.TESS.label_list.index(emo)))
    return zip_bytes(members), truth


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture(scope="module")
def archives():
    rng = np.random.default_rng(0)
    esc, esc_truth = esc50_zip(rng)
    tess, tess_truth = tess_zip(rng)
    return {"esc": esc, "esc_truth": esc_truth, "tess": tess, "tess_truth": tess_truth}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))
    return tmp_path / "home" / "dataset"


@pytest.fixture
def hosted(archives, tmp_path, home, monkeypatch):
    """The two archives on the local server; ESC50/TESS point at it."""
    with serve_directory(tmp_path / "www") as srv:
        esc_url = srv.put("datasets/ESC-50-master.zip", archives["esc"])
        tess_url = srv.put("paddleaudio/datasets/TESS_Toronto_emotional_speech_set.zip",
                           archives["tess"])
        monkeypatch.setattr(datasets.ESC50, "archive",
                            {"url": esc_url, "md5": md5(archives["esc"])})
        monkeypatch.setattr(datasets.TESS, "archive",
                            {"url": tess_url, "md5": md5(archives["tess"])})
        yield srv


def test_real_urls_and_md5s():
    assert datasets.ESC50.archive == {
        "url": "https://paddleaudio.bj.bcebos.com/datasets/ESC-50-master.zip",
        "md5": "7771e4b9d86d0945acce719c7a59305a"}
    assert datasets.TESS.archive["url"].endswith("/TESS_Toronto_emotional_speech_set.zip")
    assert len(datasets.ESC50.label_list) == 50 and len(datasets.TESS.label_list) == 7


@pytest.mark.parametrize("split", [1, 3, 5])
def test_esc50_splits_from_the_metadata(hosted, home, archives, split):
    train = datasets.ESC50(mode="train", split=split)
    dev = datasets.ESC50(mode="dev", split=split)
    truth = archives["esc_truth"]
    assert len(train) == 8 and len(dev) == 2
    assert sorted(os.path.basename(f) for f in dev.files) == \
        sorted(n for n, fold, _ in truth if fold == split)
    by_name = {n: t for n, _, t in truth}
    for ds in (train, dev):
        for f, label in zip(ds.files, ds.labels):
            assert f.startswith(str(home / "ESC-50-master" / "audio"))
            assert label == by_name[os.path.basename(f)]
    # downloaded once, then the extracted folder is reused
    assert hosted.hits("datasets/ESC-50-master.zip") == 1
    assert (home / "ESC-50-master.zip").is_file()


def test_esc50_items_raw_and_features(hosted, archives):
    raw = datasets.ESC50(mode="dev", split=2)
    wav, label = raw[0]
    assert isinstance(raw[0], AudioSample) and isinstance(raw[0], tuple)
    assert wav.shape == [SR // 2] and wav.dtype == paddle.float32 and isinstance(label, int)
    path = raw.files[0]
    np.testing.assert_allclose(wav.numpy(), sf.read(path, dtype="float32")[0], atol=1e-7)
    for feat_type, kw, shape in [
            ("melspectrogram", dict(n_fft=256, hop_length=128, n_mels=32), [32, 32]),
            ("logmelspectrogram", dict(n_fft=256, n_mels=32), [32, 63]),
            ("mfcc", dict(n_mfcc=13, n_mels=32, n_fft=256), [13, 63]),
            ("spectrogram", dict(n_fft=256, hop_length=100), [129, 41])]:
        ds = datasets.ESC50(mode="dev", split=2, feat_type=feat_type, **kw)
        feat, label2 = ds[0]
        assert feat.shape == shape and label2 == label, feat_type
        cls = {"melspectrogram": paddle.audio.features.MelSpectrogram,
               "logmelspectrogram": paddle.audio.features.LogMelSpectrogram,
               "mfcc": paddle.audio.features.MFCC,
               "spectrogram": paddle.audio.features.Spectrogram}[feat_type]
        layer = cls(**kw) if feat_type == "spectrogram" else cls(sr=SR, **kw)
        np.testing.assert_allclose(feat.numpy(), layer(wav.unsqueeze(0))[0].numpy(),
                                   rtol=1e-6, atol=1e-6)


def test_esc50_archive_argument_and_dataloader(archives, tmp_path, home):
    with serve_directory(tmp_path / "mirror") as srv:
        url = srv.put("mirror/ESC-50-master.zip", archives["esc"])
        ds = datasets.ESC50(mode="train", split=1, feat_type="mfcc",
                            archive={"url": url, "md5": md5(archives["esc"])},
                            n_mfcc=8, n_mels=16, n_fft=128)
        assert srv.hits("mirror/ESC-50-master.zip") == 1
    loader = paddle.io.DataLoader(ds, batch_size=4, shuffle=False)
    x, y = next(iter(loader))
    assert x.shape == [4, 8, 1 + (SR // 2) // 32] and y.shape == [4]
    assert y.numpy().tolist() == ds.labels[:4]
    # items pickle (worker processes) and keep their display data
    item = pickle.loads(pickle.dumps(ds[1]))
    assert isinstance(item, AudioSample) and item.sr == SR and item[1] == ds.labels[1]


def test_esc50_bad_md5_is_refused(archives, tmp_path, home):
    with serve_directory(tmp_path / "www") as srv:
        url = srv.put("ESC-50-master.zip", archives["esc"])
        with pytest.raises(RuntimeError, match="ESC-50-master.zip"):
            datasets.ESC50(archive={"url": url, "md5": "0" * 32})
    assert not (home / "ESC-50-master").exists()


def test_esc50_truncated_download_is_retried(hosted, home):
    hosted.truncate("datasets/ESC-50-master.zip", times=1)
    ds = datasets.ESC50(mode="dev", split=4)
    assert len(ds) == 2 and hosted.hits("datasets/ESC-50-master.zip") == 2


def test_tess_folds_and_labels(hosted, home, archives):
    truth = dict(archives["tess_truth"])
    n = len(truth)
    all_files = set()
    for split in range(1, 4):
        train = datasets.TESS(mode="train", n_folds=3, split=split)
        dev = datasets.TESS(mode="dev", n_folds=3, split=split)
        assert len(train) + len(dev) == n
        assert not set(train.files) & set(dev.files)
        all_files |= set(dev.files)
        for f, label in zip(train.files + dev.files, train.labels + dev.labels):
            rel = os.path.relpath(f, home).replace(os.sep, "/")
            assert truth[rel] == label
    assert len(all_files) == n  # every file is held out exactly once
    assert hosted.hits("paddleaudio/datasets/TESS_Toronto_emotional_speech_set.zip") == 1
    wav, label = datasets.TESS(mode="dev", n_folds=3, split=1)[0]
    assert wav.shape == [SR // 4]
    feat, _ = datasets.TESS(mode="dev", n_folds=3, split=1, feat_type="logmelspectrogram",
                            n_fft=128, n_mels=16)[0]
    assert feat.shape == [16, 1 + (SR // 4) // 32]


def test_bad_arguments(hosted):
    with pytest.raises(ValueError, match="split must be an int in 1..5"):
        datasets.ESC50(split=6)
    with pytest.raises(ValueError, match=r"split must be an int in 1..n_folds \(3\)"):
        datasets.TESS(n_folds=3, split=4)
    with pytest.raises(ValueError, match="n_folds must be an int >= 1"):
        datasets.TESS(n_folds=0)
    with pytest.raises(ValueError, match="unknown feat_type 'wavelet'"):
        datasets.ESC50(feat_type="wavelet")
    with pytest.raises(RuntimeError, match="unknown feat_type"):  # Paddle raises RuntimeError
        datasets.TESS(feat_type="wavelet")


def test_sample_rate_mismatch_raises(hosted):
    ds = datasets.ESC50(mode="dev", split=1, feat_type="mfcc", sr=16000)
    with pytest.raises(ValueError, match="sample rate mismatch: .* sampled at 8000 Hz but "
                                         "sr=16000"):
        ds[0]
    ds = datasets.ESC50(mode="dev", split=1, sample_rate=44100)
    with pytest.raises(ValueError, match="sample_rate=44100"):
        ds[0]


def test_stereo_files_are_mixed_to_mono(hosted, home):
    ds = datasets.ESC50(mode="dev", split=1)
    rng = np.random.default_rng(3)
    stereo = 0.2 * rng.standard_normal((1000, 2))
    sf.write(ds.files[0], stereo, SR, subtype="FLOAT")
    wav, _ = ds[0]
    np.testing.assert_allclose(wav.numpy(), stereo.mean(axis=1), atol=1e-6)


def test_item_renders_player_and_spectrogram(hosted):
    pytest.importorskip("matplotlib")
    item = datasets.ESC50(mode="dev", split=1, feat_type="logmelspectrogram", n_fft=256)[0]
    html = item._repr_html_()
    assert html.count("<audio controls") == 1 and 'src="data:audio/wav;base64,' in html
    assert html.count("data:image/png;base64,") == 2  # waveform spectrogram + the feature
    assert item.label_name == datasets.ESC50.label_list[item[1]]


def test_display_helper():
    pytest.importorskip("matplotlib")
    wav = paddle.to_tensor(np.sin(np.arange(4000) / 5.0).astype("float32"))
    d = paddle.audio.display(wav, sr=8000, title="tone")
    html = d._repr_html_()
    assert "<audio controls" in html and "data:image/png;base64," in html and "tone" in html
    assert "4000 samples at 8000 Hz" in repr(d)
    feat = paddle.audio.features.LogMelSpectrogram(sr=8000, n_fft=256)(wav.unsqueeze(0))
    fd = paddle.audio.display(feat)
    assert fd.kind == "feature" and "<audio" not in fd._repr_html_()
    with pytest.raises(ValueError, match="needs its sample rate"):
        paddle.audio.display(wav)
    with pytest.raises(ValueError, match="expected a waveform"):
        paddle.audio.display(paddle.zeros([2, 2, 2, 2]))


@pytest.mark.parity
def test_esc50_and_tess_match_paddle_on_the_same_files(pd, hosted, home, archives, monkeypatch):
    ours = datasets.ESC50(mode="train", split=2, feat_type="mfcc", n_mfcc=10, n_mels=20,
                          n_fft=256)
    from paddle.audio.datasets import esc50 as pd_esc50
    from paddle.audio.datasets import tess as pd_tess

    monkeypatch.setattr(pd_esc50, "DATA_HOME", str(home))
    monkeypatch.setattr(pd_tess, "DATA_HOME", str(home))
    ref = pd.audio.datasets.ESC50(mode="train", split=2, feat_type="mfcc", n_mfcc=10,
                                  n_mels=20, n_fft=256)
    assert ours.files == ref.files and ours.labels == ref.labels
    for i in (0, 5):
        (a, la), (b, lb) = ours[i], ref[i]
        assert la == lb and a.shape == list(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-3)
    raw_ours = datasets.ESC50(mode="dev", split=3)
    raw_ref = pd.audio.datasets.ESC50(mode="dev", split=3)
    np.testing.assert_allclose(raw_ours[1][0].numpy(), raw_ref[1][0].numpy(), atol=1e-7)
    t_ours = datasets.TESS(mode="dev", n_folds=1, split=1)
    t_ref = pd.audio.datasets.TESS(mode="dev", n_folds=1, split=1)
    # Paddle deals folds in os.walk order; with one fold every file is held out either way
    assert len(t_ours) == len(archives["tess_truth"])
    assert sorted(zip(t_ours.files, t_ours.labels)) == sorted(zip(t_ref.files, t_ref.labels))
