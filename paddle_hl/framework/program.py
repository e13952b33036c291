"""Program and Block in dygraph meaning: the objects ``Tensor.block`` and initializers pass.

In Paddle's dygraph mode every tensor and parameter reports the global block of the default main
program, and initializers accept it as their ``block`` argument without using it. These classes
give the same objects: one global block per program, holding no ops (paddle_hl runs eagerly).
"""

from __future__ import annotations

import contextlib

__all__ = []


class Block:
    """A block of a :class:`Program` (only the global block, index 0, exists in dygraph)."""

    def __init__(self, program, idx=0, parent_idx=-1):
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.forward_block_idx = -1
        self.ops = []
        self.vars = {}

    def all_parameters(self) -> list:
        """Parameters created in this block: none in dygraph."""
        return []

    def __repr__(self):
        return (f"{{ // block_idx:{self.idx}  parent_idx:{self.parent_idx}  "
                f"forward_idx:{self.forward_block_idx}  backward_idx:-1\n\n}}")

    __str__ = __repr__


class Program:
    """A program, as ``paddle.static.Program``: a list of blocks (dygraph: one empty block)."""

    def __init__(self):
        self.blocks = [Block(self)]
        self.random_seed = 0

    def global_block(self) -> Block:
        """The outermost block (index 0)."""
        return self.blocks[0]

    def current_block(self) -> Block:
        """The block ops would be added to: the global block."""
        return self.blocks[0]

    def block(self, index) -> Block:
        """The block at ``index``."""
        if not 0 <= int(index) < len(self.blocks):
            raise IndexError(f"Program.block: index {index} out of range "
                             f"(the program has {len(self.blocks)} block(s))")
        return self.blocks[int(index)]

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    def clone(self, for_test=False):
        """A new program with the same (empty) blocks."""
        return Program()

    def all_parameters(self) -> list:
        """Parameters recorded in the program: none in dygraph."""
        return []

    def __repr__(self):
        return "\n".join(repr(b) for b in self.blocks)


_main = Program()
_startup = Program()


def default_main_program() -> Program:
    """The default main program (its global block is what ``Tensor.block`` returns)."""
    return _main


def default_startup_program() -> Program:
    """The default startup program."""
    return _startup


@contextlib.contextmanager
def program_guard(main_program, startup_program=None):
    """Make ``main_program`` (and ``startup_program``) the defaults inside the block."""
    global _main, _startup
    if not isinstance(main_program, Program):
        raise TypeError(f"program_guard: main_program must be a Program, got "
                        f"{type(main_program).__name__}")
    if startup_program is not None and not isinstance(startup_program, Program):
        raise TypeError(f"program_guard: startup_program must be a Program, got "
                        f"{type(startup_program).__name__}")
    prev = _main, _startup
    _main = main_program
    _startup = startup_program or _startup
    try:
        yield
    finally:
        _main, _startup = prev
