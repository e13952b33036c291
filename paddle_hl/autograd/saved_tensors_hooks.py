"""``saved_tensors_hooks``: transform the tensors that ops keep for backward."""

from __future__ import annotations

from ..framework import state

__all__ = []


class saved_tensors_hooks:  # noqa: N801  (Paddle's name)
    """Context manager: pack each tensor saved for backward, unpack it when backward runs.

    Inside the block, every tensor an op keeps for its backward (and every tensor given to
    ``PyLayerContext.save_for_backward``) is passed to ``pack_hook``; what it returns is kept
    instead. At backward, ``unpack_hook`` turns that back into the Tensor. Use it to offload
    activations, compress them, or log them. Gradients are the same as without the hooks, as
    long as ``unpack_hook(pack_hook(t))`` has t's values.

    Args:
        pack_hook (callable): ``pack_hook(tensor) -> anything``.
        unpack_hook (callable): ``unpack_hook(packed) -> Tensor``.

    Example:
        >>> def pack(t):
        ...     return t.numpy()
        >>> def unpack(a):
        ...     return paddle.to_tensor(a)
        >>> x = paddle.to_tensor([1., 2.], stop_gradient=False)
        >>> with paddle.autograd.saved_tensors_hooks(pack, unpack):
        ...     y = x * x
        >>> y.sum().backward()  # x.grad == [2., 4.]
    """

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callable")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        entry = (self.pack_hook, self.unpack_hook)
        self.__dict__.setdefault("_entries", []).append(entry)
        state.saved_hooks.append(entry)
        return self

    def __exit__(self, *exc):
        # the hooks are process-wide, as in Paddle: remove this block's own entry (the last one
        # equal to it), not whatever another thread pushed last
        entry = self._entries.pop()
        hooks = state.saved_hooks
        for i in range(len(hooks) - 1, -1, -1):
            if hooks[i] is entry:
                del hooks[i]
                break
        return False
