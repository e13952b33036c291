"""A PaddleNLP-style encoder on incubate fused layers, with the version checks and to_static
declaration such code carries."""

import paddle
import paddle.nn as nn
from paddle.incubate.nn import FusedTransformerEncoderLayer
from paddle.static import InputSpec

# PaddleNLP gates features on the installed Paddle version
if paddle.version.major != "0" and tuple(int(v) for v in paddle.__version__.split(".")[:2]) >= (
        2, 5):
    USE_FUSED = True
else:
    raise RuntimeError("needs paddle >= 2.5")


class TinyEncoder(nn.Layer):
    def __init__(self, vocab=50, d_model=16, nhead=2, layers=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(32, d_model)
        self.layers = nn.LayerList([
            FusedTransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout_rate=0.0)
            for _ in range(layers)])
        self.pooler = nn.Linear(d_model, d_model)

    @paddle.jit.to_static(input_spec=[InputSpec([None, None], "int64", "input_ids")])
    def forward(self, input_ids):
        pos = paddle.arange(input_ids.shape[1], dtype="int64").unsqueeze(0)
        h = self.embeddings(input_ids) + self.position(pos)
        for layer in self.layers:
            h = layer(h)
        return paddle.tanh(self.pooler(h[:, 0]))


def build():
    return TinyEncoder()
