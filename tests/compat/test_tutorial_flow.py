"""A tutorial-style flow: train, evaluate and predict with paddle.Model, save for inference
with jit.save, reload in a fresh process without the model class and predict again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import paddle_hl as paddle
from paddle_hl.static import InputSpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class BlobDataset(paddle.io.Dataset):
    """Two classes of 1x8x8 images: a bright top half or a bright bottom half, plus noise."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 2, n).astype("int64")
        self.images = rng.normal(0, 0.3, [n, 1, 8, 8]).astype("float32")
        for i, y in enumerate(self.labels):
            self.images[i, 0, :4] += 1.0 if y == 0 else 0.0
            self.images[i, 0, 4:] += 1.0 if y == 1 else 0.0

    def __getitem__(self, i):
        return self.images[i], self.labels[i:i + 1]

    def __len__(self):
        return len(self.labels)


class SmallNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = paddle.nn.Conv2D(1, 4, 3, padding=1)
        self.pool = paddle.nn.MaxPool2D(2)
        self.fc = paddle.nn.Linear(4 * 4 * 4, 2)

    def forward(self, x):
        return self.fc(paddle.flatten(self.pool(paddle.nn.functional.relu(self.conv(x))), 1))


def test_train_evaluate_predict_save_reload(tmp_path):
    paddle.seed(0)
    net = SmallNet()
    model = paddle.Model(net, inputs=[InputSpec([None, 1, 8, 8], "float32", "x")],
                         labels=[InputSpec([None, 1], "int64", "label")])
    model.prepare(paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    model.fit(BlobDataset(256, 0), epochs=3, batch_size=32, verbose=0)
    result = model.evaluate(BlobDataset(64, 1), batch_size=32, verbose=0)
    assert result["acc"] > 0.9
    test = BlobDataset(20, 2)
    preds = np.concatenate(model.predict(test, batch_size=8, verbose=0)[0])
    assert preds.shape == (20, 2)
    assert (preds.argmax(1) == test.labels).mean() > 0.9

    prefix = str(tmp_path / "inference" / "model")
    paddle.jit.save(net, prefix, input_spec=[InputSpec([None, 1, 8, 8], "float32", "x")])
    np.save(tmp_path / "images.npy", test.images)
    code = textwrap.dedent(f"""
        import numpy as np
        import paddle_hl as paddle

        layer = paddle.jit.load({prefix!r})
        layer.eval()
        images = paddle.to_tensor(np.load({str(tmp_path / 'images.npy')!r}))
        np.save({str(tmp_path / 'reloaded.npy')!r}, layer(images).numpy())
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "reloaded.npy"), preds, rtol=1e-5, atol=1e-6)
