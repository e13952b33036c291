"""Reader decorators: each takes readers (functions returning an iterator of samples) and
returns a new reader."""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import random
import threading

__all__ = []

_END = object()  # marks the end of a producer's samples in a queue


class ComposeNotAligned(ValueError):
    """Raised by :func:`compose` when its readers yield different numbers of samples."""


def cache(reader):
    """Read every sample of ``reader`` once, into memory, and serve them from there.

    Args:
        reader (callable): a reader.

    Returns:
        callable: a reader over the cached samples.
    """
    data = list(reader())

    def cached():
        yield from data

    return cached


def map_readers(func, *readers):
    """A reader of ``func(a, b, ...)`` over the samples the readers yield side by side.

    Args:
        func (callable): applied to one sample of each reader.
        *readers (callable): readers; the shortest one ends the output.

    Returns:
        callable: the mapped reader.
    """

    def mapped():
        for items in zip(*(r() for r in readers)):
            yield func(*items)

    return mapped


def shuffle(reader, buf_size):
    """Shuffle samples within windows of ``buf_size``.

    Args:
        reader (callable): a reader.
        buf_size (int): how many samples are shuffled together.

    Returns:
        callable: the shuffled reader (Python's ``random`` draws the order).
    """

    def shuffled():
        buf = []
        for s in reader():
            buf.append(s)
            if len(buf) >= buf_size:
                random.shuffle(buf)
                yield from buf
                buf = []
        if buf:
            random.shuffle(buf)
            yield from buf

    return shuffled


def chain(*readers):
    """A reader of every sample of the first reader, then of the second, and so on."""

    def chained():
        return itertools.chain(*(r() for r in readers))

    return chained


def compose(*readers, **kwargs):
    """A reader of tuples joining one sample of each reader; tuple samples are flattened in.

    Args:
        *readers (callable): readers to read side by side.
        check_alignment (bool, keyword): raise :class:`ComposeNotAligned` when the readers end
            at different lengths (default True); when False the shortest one ends the output.

    Returns:
        callable: the composed reader.
    """
    check_alignment = kwargs.pop("check_alignment", True)
    if kwargs:
        raise TypeError(f"paddle.reader.compose: unexpected keyword arguments {sorted(kwargs)}")

    def flat(x):
        return x if isinstance(x, tuple) else (x,)

    def composed():
        its = [r() for r in readers]
        if not check_alignment:
            for items in zip(*its):
                yield sum((flat(i) for i in items), ())
            return
        for items in itertools.zip_longest(*its, fillvalue=_END):
            if any(i is _END for i in items):
                raise ComposeNotAligned("outputs of readers are not aligned.")
            yield sum((flat(i) for i in items), ())

    return composed


def buffered(reader, size):
    """Read ahead up to ``size`` samples in a background thread.

    Args:
        reader (callable): a reader.
        size (int): the most samples held ahead of the consumer.

    Returns:
        callable: the buffered reader (same samples, same order).
    """

    def read_into(q, errors):
        try:
            for s in reader():
                q.put(s)
        except BaseException as e:  # handed to the consumer, raised there
            errors.append(e)
        q.put(_END)

    def buffered_reader():
        q = queue.Queue(maxsize=max(1, int(size)))
        errors = []
        t = threading.Thread(target=read_into, args=(q, errors), daemon=True)
        t.start()
        while True:
            s = q.get()
            if s is _END:
                break
            yield s
        if errors:
            raise errors[0]

    return buffered_reader


def firstn(reader, n):
    """A reader of the first ``n`` samples of ``reader``."""

    def first():
        yield from itertools.islice(reader(), n)

    return first


def xmap_readers(mapper, reader, process_num, buffer_size, order=False):
    """Map samples with ``mapper`` in ``process_num`` threads.

    Args:
        mapper (callable): applied to each sample.
        reader (callable): a reader.
        process_num (int): number of worker threads.
        buffer_size (int): the most samples queued between the stages.
        order (bool): keep the input order (default False: the order the workers finish in).

    Returns:
        callable: the mapped reader.
    """

    def xreader():
        in_q = queue.Queue(buffer_size)
        out_q = queue.Queue(buffer_size)
        errors = []

        def feed():
            try:
                for i, s in enumerate(reader()):
                    in_q.put((i, s))
            except BaseException as e:
                errors.append(e)
            for _ in range(process_num):
                in_q.put(_END)

        def work():
            while True:
                item = in_q.get()
                if item is _END:
                    out_q.put(_END)
                    return
                i, s = item
                try:
                    out_q.put((i, mapper(s)))
                except BaseException as e:
                    errors.append(e)
                    out_q.put((i, _END))

        threads = [threading.Thread(target=feed, daemon=True)]
        threads += [threading.Thread(target=work, daemon=True) for _ in range(process_num)]
        for t in threads:
            t.start()
        finished, pending, nxt = 0, {}, 0
        while finished < process_num:
            item = out_q.get()
            if item is _END:
                finished += 1
                continue
            if errors:
                raise errors[0]
            i, s = item
            if not order:
                yield s
                continue
            pending[i] = s
            while nxt in pending:
                yield pending.pop(nxt)
                nxt += 1
        if errors:
            raise errors[0]
        for i in sorted(pending):
            yield pending[i]

    return xreader


def _produce(reader, q):
    try:
        for s in reader():
            q.put(s)
    except BaseException as e:
        q.put(("__reader_error__", repr(e)))
    q.put(None)


def multiprocess_reader(readers, use_pipe=True, queue_size=1000):
    """Run each reader in its own process and yield their samples as they arrive.

    Args:
        readers (list): readers, one process each (the samples must be picklable; a reader
            may not yield None, which marks a process's end).
        use_pipe (bool): accepted for Paddle's signature; samples travel through a
            multiprocessing queue either way.
        queue_size (int): the most samples in flight.

    Returns:
        callable: the merged reader (order across readers is not fixed).
    """
    if not isinstance(readers, (list, tuple)) or not readers:
        raise ValueError("paddle.reader.multiprocess_reader: readers must be a non-empty list "
                         f"of readers, got {readers!r}")

    def merged():
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue(queue_size)
        procs = [ctx.Process(target=_produce, args=(r, q), daemon=True) for r in readers]
        for p in procs:
            p.start()
        done = 0
        try:
            while done < len(procs):
                s = q.get()
                if s is None:
                    done += 1
                elif isinstance(s, tuple) and len(s) == 2 and s[0] == "__reader_error__":
                    raise RuntimeError(f"paddle.reader.multiprocess_reader: a reader failed: "
                                       f"{s[1]}")
                else:
                    yield s
        finally:
            for p in procs:
                p.join(timeout=5)
                if p.is_alive():
                    p.terminate()

    return merged
