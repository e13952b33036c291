"""Model files written the way PaddleClas, PaddleSeg and PaddleNLP write theirs (``import
paddle``); the compat tests run them with ``paddle`` resolving to paddle_hl and to real Paddle."""
