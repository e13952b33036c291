"""Every performance threshold of paddle_hl, in one table.

A threshold here chooses an algorithm (which convolution form runs, when the depthwise taps go
channels last), a block size, a thread split or a cache limit. Each entry says what it decides,
the measurement behind its value and the machine it was measured on, so the set can be
re-measured together on another machine.

Readers take a value once, at import, into a module global (``_KEEP_COLS =
tuning.value("conv.keep_cols")``): a hot path then reads a global, as before, and a test may
still patch that global. No module keeps a numeric threshold of its own
(``tests/backend/test_tuning.py`` checks it).

"""

from __future__ import annotations

from typing import NamedTuple

__all__ = []

#: the machine most figures come from
VM = "2-core AMD EPYC VM"


class Entry(NamedTuple):
    """One threshold: its dotted name, value, what it decides, the measurement behind the value
    and the machine it was measured on."""

    name: str
    value: int | float
    decides: str
    measured: str
    machine: str = VM


TABLE = (
    # ------------------------------------------------------------ convolution (backend/windows)
    Entry("conv.keep_cols", 64 << 20,
          "bytes of im2col columns the forward pass keeps for the weight gradient; larger "
          "columns are recomputed from x in the backward pass",
          "no figure recorded: a memory bound (larger columns are recomputed from x rather "
          "than holding prod(k) copies of every activation through the backward pass)"),
    Entry("conv.pointwise_min", 64,
          "output pixels from which a 1x1 convolution is a per-sample GEMM on x itself; "
          "smaller planes run one batched im2col GEMM with k=1; also the smallest output "
          "plane of the direct kernels",
          "no figure recorded: on smaller planes one GEMM over the whole batch (im2col with "
          "k=1) was measured faster"),
    Entry("conv.wide_max", 2.0,
          "padded/output plane width ratio below which a stride-1 input gradient runs col2im "
          "on flattened padded planes",
          "no figure recorded: the GEMM grows by the ratio while the col2im adds become one "
          "contiguous run per channel and sample instead of one per output row"),
    Entry("conv.nin_min_batch", 8,
          "batch size from which the batch-innermost im2col layout (im2col_nin) is considered",
          "no figure recorded; measured on ResNet's 3x3 layers and LeNet's second layer: the "
          "layout wins when the batch is not tiny and the columns are large next to the "
          "output"),
    Entry("conv.nin_fwd_max_plane", 256,
          "without a gradient (inference), the largest output plane (pixels) of a stride-1 "
          "layer that still uses the batch-innermost layout",
          "ResNet-50 at batch 8, the layers the rule moves back to plain im2col: 144 -> "
          "118 ms"),
    Entry("conv.direct_max_taps", 32,
          "input channels x kernel taps up to which a thin 2-D convolution runs as the direct "
          "compiled kernels instead of im2col + GEMM",
          "LeNet's first layer at batch 64: forward 0.31 -> 0.1 ms; 3 -> 32 channels, 3x3, "
          "64x64 at batch 16: forward and backward 6.8 -> 4.7 ms"),
    Entry("conv.gram_swap_min_len", 2048,
          "pixels (the GEMM's inner length) from which a weight gradient g @ cols^T with more "
          "columns than output channels is computed as (cols @ g^T)^T (windows.gram)",
          "LeNet's second layer (16 x 150, 6400 long): 0.47 -> 0.26 ms; ResNet-18's 64-channel "
          "layers (2048 long) 1.12 -> 0.90 ms; 512 long: no difference; 128 and shorter: the "
          "swapped form 1.6-4x slower"),
    Entry("conv.plan_cache", 4096,
          "convolution and pooling plans kept per process (one per layer geometry); the cache "
          "is emptied when it is full",
          "not measured: a memory bound (a network runs a few dozen geometries per step; a "
          "plan holds a few hundred bytes)"),
    Entry("norm.rows_blocks", 8,
          "blocks of rows the compiled channels-last batch norm's chunked kernels sum "
          "separately (on the thread pool) before adding them up in order",
          "no figure recorded: enough pieces for the pool's threads; the count depends on the "
          "sizes only, so the sums are the same with any number of threads"),
    Entry("norm.rows_chunk", 256,
          "values per chunk of the chunked channels-last batch norm's loops (whole rows: a "
          "chunk holds ceil(256 / C) rows)",
          "[16*1024, 32] rows, one pass on one thread: 0.17 ms with a loop per row of 32 "
          "channels; with the chunks, forward and backward 1.67/2.45 -> 0.50/0.34 ms"),
    Entry("norm.rows_min_channels", 64,
          "channels from which channels-last batch norm arrays the pool does not split run "
          "as the per-row kernels (fewer: the chunked ones)",
          "[16*1024, 16] rows: per-row 0.34/0.92 ms, chunked 0.16/0.19 ms; [16*64, 192]: "
          "per-row 0.10/0.16 ms, chunked 0.14/0.16 ms"),
    # ------------------------------------------------------------------- linear (nn/functional)
    Entry("linear.thin_out", 16,
          "output features up to which linear's input gradient g @ w^T multiplies a C-order "
          "copy of w^T rather than the transposed view",
          "an MLP's 512 -> 10 classifier at batch 128: 0.11 -> 0.018 ms; 512 -> 16 at batch "
          "64: 0.051 -> 0.014 ms; from 32 outputs on the copy is mostly slower (up to 3.6x)"),
    Entry("linear.thin_copy_max", 8192,
          "weight elements (in x out) up to which linear.thin_out's copy is made",
          "10 or 16 outputs of 2048 inputs: the copy 1.09-1.26x slower; of 120 or 512 "
          "inputs: 0.16-0.95x"),
    # ------------------------------------------------------------ depthwise (backend/_numpy)
    Entry("depthwise.block_bytes", 1 << 20,
          "scratch bytes of the input planes of one block of the blocked depthwise kernels",
          "MobileNetV2's layers at batch 8: 1 MiB beat 256 KiB and 4 MiB"),
    Entry("depthwise.bufsize", 16,
          "NumPy ufunc buffer (elements) the depthwise taps run with",
          "NumPy >= 2.3 copies strided operands through its 8192-element buffer on rows "
          "shorter than it: 3-4x slower on the runs of a few hundred to a few thousand values "
          "here; none of the calls casts, so none needs a buffer"),
    Entry("depthwise.cl_max_out", 64,
          "largest output plane (pixels) of a depthwise layer that runs channels last",
          "MobileNetV2's layers, one thread: channels last 1.3-5x faster on output planes up "
          "to 8x8; on larger ones the two transposing copies cost more than the phase planes' "
          "padding"),
    Entry("depthwise.cl_max_plane", 200,
          "largest input plane (pixels) of a depthwise layer that runs channels last (NumPy)",
          "MobileNetV2's layers, one thread: faster on input planes up to 14x14"),
    Entry("depthwise.cl_max_plane_jit", 1024,
          "largest input plane (pixels) of a depthwise layer that runs channels last as the "
          "compiled kernels",
          "the compiled channels-last kernels stay ahead up to 32x32 (a 16x16 plane at stride "
          "2: 1.3x faster backward)"),
    Entry("depthwise.planes_min_row", 16,
          "shortest output row from which a depthwise layer runs as the compiled phase-plane "
          "kernels (shorter rows run NumPy's blocked passes)",
          "no figure recorded: on shorter rows the per-row work of the compiled loops costs "
          "more than NumPy's blocked passes"),
    Entry("depthwise.cl_wgrad_blocks", 8,
          "blocks of output rows the compiled channels-last depthwise weight gradient sums "
          "separately (on the thread pool) before adding them up in order",
          "no figure recorded: enough pieces for the pool's threads; the count depends on the "
          "sizes only, so the sums are the same with any number of threads"),
    Entry("depthwise.cl_smallbuf_max", 32,
          "largest output plane (pixels) whose channels-last taps run with the small ufunc "
          "buffer",
          "no figure recorded: faster there (runs of a few hundred values), slower on larger "
          "planes"),
    Entry("depthwise.plan_cache", 512,
          "depthwise phase-plane plans kept (least recently used dropped)",
          "not measured: a memory bound (one plan per depthwise layer geometry)"),
    # ------------------------------------------------------------ process (backend/_numpy)
    Entry("malloc.mmap_threshold", 32 << 20,
          "glibc mmap threshold: blocks up to this size come from the heap",
          "without it every array above glibc's threshold is a fresh mapping and the next "
          "step pays a page fault per 4 KiB page: a third of LeNet's step; 32 MiB is the most "
          "glibc's own adaptive threshold reaches"),
    Entry("malloc.trim_threshold", 1 << 30,
          "glibc trim threshold: free heap kept in the process between steps",
          "freed memory above the trim threshold went back to the OS at the end of a step and "
          "was faulted in again by the next (with the mmap threshold: a third of LeNet's "
          "step); peak memory is unchanged"),
    Entry("index_add.rank_loops", 8,
          "occurrence ranks of repeated ids added by fancy-indexed adds before the rest goes "
          "through np.add.at (embedding gradients)",
          "no figure recorded: np.add.at handles one row at a time, a ranked add one rank of "
          "distinct ids; the rare heavy repeats go to np.add.at"),
    # ------------------------------------------------------------ thread pool (backend/_threads)
    Entry("threads.min_bytes", 4 << 20,
          "bytes an op must touch before it is split over the CPU thread pool",
          "no figure recorded: waking a thread costs tens of microseconds, more than a small "
          "op takes"),
    Entry("threads.pieces_per_thread", 2,
          "pieces per thread a split cuts its work into (the caller takes over pieces no "
          "worker started)",
          "no figure recorded: on shared cores a worker the OS is slow to wake then costs "
          "nothing, the call degrades to the one-thread time"),
    # ------------------------------------------------------------ nn/functional
    Entry("norm.vecdot_min", 64,
          "row length from which a per-channel sum of products uses np.vecdot",
          "one read pass and no product temporary: about 3x faster at 256 elements per row; "
          "shorter rows are faster as a product and two sums"),
    Entry("norm.unbuffered_row", 512,
          "row length from which batch norm's per-channel scale and shift run with the small "
          "ufunc buffer; shorter rows use scale and shift expanded to one [C*S] row",
          "NumPy >= 2.3 buffers strided rows shorter than 8192: 1.5x slower on 28x28 and "
          "56x56 planes; the expanded rows are 1.3-2.5x faster on 7x7 and 14x14 from N = 2"),
    Entry("activation.relu_row", 8192,
          "row length of the shared zero row that large contiguous ReLU inputs are compared "
          "against",
          "fmax/maximum against an array uses NumPy's vector loop: 2.7x faster in cache, 1.5x "
          "on activations larger than the cache"),
    Entry("rnn.shard_min_rows", 8,
          "rows per shard of the sharded RNN step loop below which a shard's GEMM loses its "
          "efficiency", "no figure recorded"),
    Entry("rnn.shard_min_work", 1 << 24,
          "batch * hidden^2 * steps below which the RNN step loop runs on one thread",
          "no figure recorded: one thread is as fast below this much work"),
    Entry("rnn.shard_min_step", 1 << 17,
          "rows * hidden^2 of one shard's step below which the shards' threads contend",
          "no figure recorded: NumPy must drop the GIL in each shard's step"),
    Entry("rnn.fused_min_rows", 16,
          "rows of an LSTM shard from which one GEMM per step of [x|1|h] beats projecting the "
          "inputs of all steps first", "no figure recorded (see rnn.py's _lstm_seq)"),
    Entry("rnn.work_max_bytes", 1 << 29,
          "bytes of fused-LSTM work buffers kept on the free list between steps",
          "mapping and zeroing fresh buffers each step cost about as much as the elementwise "
          "work of a whole step loop"),
    # ------------------------------------------------------------ optimizer, sparse, distributed
    Entry("optimizer.block", 65536,
          "elements per cache block of the NumPy in-place optimizer updates",
          "ResNet-18's parameters, Adam: 18.6 ms whole-array, 16.1 ms at 32K, 15.7 ms at 64K "
          "elements"),
    Entry("sparse.chunk", 1 << 22,
          "elements per gathered block in sddmm",
          "no figure recorded: a memory bound (16 MiB of float32 per block)"),
    Entry("sparse.parallel_min", 1 << 23,
          "multiply-adds below which a sparse product runs on one thread",
          "no figure recorded: one thread is faster than several below this"),
    Entry("sparse.dense_lookup_max", 1 << 25,
          "grid positions up to which the sparse convolution's rulebook uses a dense lookup "
          "table", "not measured: a memory bound (the table is int32: 128 MiB at most)"),
    Entry("sparse.pairs_below", 0.3,
          "share of filled (output, offset) slots below which the sparse convolution uses "
          "per-offset pair lists instead of the dense patch matrix",
          "no figure recorded: most rows of the dense matrix would be the zero padding row"),
    Entry("dp.shm_chunk_bytes", 1 << 18,
          "bytes of one rank's buffer averaged per step by DataParallel's shared-memory "
          "all-reduce", "no figure recorded: a few such chunks fit in L2"),
    Entry("io.inline_bytes", 1 << 16,
          "bytes below which a DataLoader worker sends an array inside the pickle instead of "
          "a shared-memory segment",
          "no figure recorded: smaller arrays are cheaper in the pickle than in a segment"),
    Entry("io.pool_slots", 32,
          "pooled shared-memory segments per DataLoader worker (beyond them, one-shot "
          "segments)", "no figure recorded: steady-state batches reuse mapped pages"),
    # ------------------------------------------------------------ Winograd (backend/winograd)
    Entry("winograd.block_bytes", 512 << 10,
          "bytes of scratch (phase planes and row-transformed rows, or output rows) per "
          "channel block of the Winograd transforms",
          "no figure recorded: a block's planes stay in the 2-core VM's L2 (512 KiB)"),
    Entry("winograd.wide_max_k_per_tile", 64,
          "output channels per tile of a tile row up to which NumPy's transforms use wide tile "
          "rows (one skipped GEMM column each, the column transform one pass per block)",
          "one thread, CPU time, conv forward: 64->64 at 56x56 batch 8 26.7 -> 23.8 ms, 256 at "
          "8x8 batch 32 23.3 -> 20.8 ms; 512 at 7x7 batch 8 17.7 -> 18.4 ms, 512 at 4x4 batch "
          "32 22.3 -> 23.6 ms"),
    Entry("winograd.fused_max_u_bytes", 256 << 10,
          "weight-transform bytes up to which a layer runs in blocks of tile rows kept in "
          "cache (transform, products and inverse transform per block)",
          "one thread, CPU time, against the whole-layer form: 64->64 at 56x56 batch 8 0.92x "
          "(NumPy) and 0.86x (numba), at 32x32 batch 32 0.85x and 0.75x; 128->128 at 28x28 "
          "batch 8 1.15x and 1.06x (so not there)"),
    Entry("winograd.fused_block_bytes", 1 << 20,
          "bytes of V and M per block of tile rows in the blocked form",
          "against 2 MiB blocks: 0.94/0.94, 0.86/0.70, 1.23/1.13 of the whole-layer form on "
          "the layers above; 256 KiB blocks lose on NumPy (many small passes)"),
    Entry("winograd.min_channels", 64,
          "least input and output channels for a 3x3 stride-1 inference layer to run as "
          "Winograd with NumPy's transforms",
          "one thread, CPU time: 16->16 at 32x32 batch 8 1.4x, 32->64 at 28x28 1.3x the "
          "im2col forms; every ResNet-50/ResNet-18 layer (64..512 channels) 0.63-0.91x"),
    Entry("winograd.min_channels_compiled", 16,
          "the same with the compiled (numba) transforms",
          "one thread, CPU time: 8->8 at 28x28 1.0x, 16->32 at 9x9 batch 4 1.5x (too little "
          "work, see min_work_compiled); ResNet layers 0.44-0.78x"),
    Entry("winograd.min_tiles", 256,
          "least 2x2 output tiles in the batch (the GEMMs' column count) for Winograd: the "
          "weight is transformed on every call (about 20 passes over [K, C]), which only "
          "pays over enough tiles",
          "one thread, CPU time, weight transformed per call: 256->256 at 14x14 batch 8 (392 "
          "tiles) 0.77x NumPy / 0.71x numba; 512->512 at 7x7 batch 8 (128 tiles) 1.13x / "
          "1.01x, 512 at 4x4 batch 32 (128 tiles) 1.06x / 0.80x"),
    Entry("winograd.numpy_max_threads", 1,
          "CPU pool threads up to which NumPy's Winograd transforms run (the compiled ones "
          "run on any number)",
          "wall time, 2 threads, ResNet-50 at batch 8, against the faster im2col form: NumPy "
          "transforms 1.11x (64 at 56x56), 1.04x (128 at 28x28), 1.00x (256 at 14x14); "
          "compiled 0.51x, 0.68x, 0.80x; one thread, CPU time: NumPy 0.63-0.77x"),
    Entry("winograd.min_work", 1 << 21,
          "least C * K * tiles for Winograd with NumPy's transforms",
          "one thread, CPU time: 64->64 at 8x8 batch 8 (2^18) 1.1x the im2col forms"),
    Entry("winograd.min_work_compiled", 1 << 18,
          "the same with the compiled transforms",
          "one thread, CPU time: 16->32 at 9x9 batch 4 (2^15.3) 1.5x"),
    # ------------------------------------------------------------ domains
    Entry("vision.chunk_elems", 1 << 24,
          "elements one gathered block of the detection ops may hold before the work is split",
          "not measured: a memory bound on one gathered block"),
    Entry("vision.nms_block", 256,
          "boxes resolved together by the blocked greedy NMS",
          "no figure recorded"),
    Entry("geometric.dense_limit", 1 << 22,
          "largest node id (or four times the ids' count, whichever is larger) below which "
          "reindexing uses a dense lookup array instead of sorting",
          "not measured: a memory bound"),
)

_VALUES = {e.name: e.value for e in TABLE}
assert len(_VALUES) == len(TABLE), "tuning: duplicate entry names"


def value(name):
    """The value of the threshold ``name`` (a dotted name of :data:`TABLE`).

    Raises:
        KeyError: naming the unknown threshold and the known ones.
    """
    try:
        return _VALUES[name]
    except KeyError:
        raise KeyError(f"tuning.value: no threshold named {name!r}; the table has "
                       f"{sorted(_VALUES)}") from None


def entry(name):
    """The :class:`Entry` of threshold ``name``."""
    value(name)
    return next(e for e in TABLE if e.name == name)
