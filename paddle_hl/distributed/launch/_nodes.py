"""Jobs across machines, Paddle's way: the same launcher command runs on every machine.

``--ips h1,h2`` (the first address is the master) or ``--master h1:PORT --nnodes 2``: the
launcher on the master's machine listens on the master port (``--master``'s, or
``PADDLE_HL_MASTER_PORT``, default 6170, with ``--ips``); the launchers of the other machines
connect to it (retrying until the master is up) and say how many ranks they run. Once all
``nnodes`` machines have joined, the master starts MPI's launcher (``mpiexec``) with its manual
launcher: mpiexec gives one command line per machine (its proxy, which starts that machine's
ranks), and the master hands each to the launcher of that machine, which runs it. No ssh is
involved: every machine starts its own processes, as with Paddle's launcher.

The ranks report to the master's monitor over TCP, so a rank that fails or dies anywhere is
named, with its host; the master then stops the whole job and tells the other launchers, which
stop their machine's processes and remove the shared memory the job left there. A launcher
that loses its master stops its machine's part of the job. A machine that does not join within
``PADDLE_HL_RENDEZVOUS_TIMEOUT`` seconds (default 300) ends the job with an error naming the
machines that are missing; a master port already in use is an error saying so.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from ._job import JobError, run, sweep_shm

__all__ = []

PORT_ENV = "PADDLE_HL_MASTER_PORT"
TIMEOUT_ENV = "PADDLE_HL_RENDEZVOUS_TIMEOUT"
DEFAULT_PORT = 6170
_HELLO = "paddle_hl launch"
_NAME = "paddle_hl.distributed.launch"


def rendezvous_timeout() -> float:
    value = os.environ.get(TIMEOUT_ENV, "300")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{_NAME}: {TIMEOUT_ENV} must be a number of seconds, got "
                         f"{value!r}") from None


def _split_master(master, ips):
    """``(host, port)`` of the master: ``--master host:port`` or the first of ``--ips``."""
    if master:
        text = master.split("://", 1)[-1].rstrip("/")
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise JobError(f"{_NAME}: --master must be HOST:PORT (e.g. 10.0.0.1:6170), got "
                           f"{master!r}")
        return host, int(port)
    port = os.environ.get(PORT_ENV, str(DEFAULT_PORT))
    if not port.isdigit():
        raise JobError(f"{_NAME}: {PORT_ENV} must be a port number, got {port!r}")
    return ips[0], int(port)


def _addresses(host):
    try:
        return sorted({a[4][0] for a in socket.getaddrinfo(host, None, socket.AF_INET)})
    except OSError:
        return []


def _is_local(host):
    """Whether ``host`` names this machine: one of its addresses can be bound here."""
    if host in (socket.gethostname(), "localhost", "127.0.0.1"):
        return True
    for addr in _addresses(host):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((addr, 0))
            return True
        except OSError:
            continue
        finally:
            s.close()
    return False


def _send(conn, **msg):
    conn.sendall((json.dumps(msg) + "\n").encode())


class _Lines:
    """JSON messages from a socket, one per line."""

    def __init__(self, conn):
        self.conn = conn
        self.buf = b""

    def next(self, timeout=None):
        """The next message (None: the connection closed; TimeoutError after ``timeout``)."""
        self.conn.settimeout(timeout)
        while b"\n" not in self.buf:
            try:
                chunk = self.conn.recv(65536)
            except TimeoutError:
                raise TimeoutError from None
            except OSError:
                chunk = b""
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return None


def run_nodes(nnodes, ips, master, per_node, env, worker_args, run_dir):
    """Run this machine's part of a job on ``nnodes`` machines; returns the exit status.

    Raises:
        JobError: the job failed, or the machines did not all join (the message says which).
    """
    host, port = _split_master(master, ips)
    if ips and len(ips) != nnodes:
        raise JobError(f"{_NAME}: --nnodes {nnodes} but --ips lists {len(ips)} machines "
                       f"({','.join(ips)})")
    index = None
    if ips:
        index = next((i for i, ip in enumerate(ips) if _is_local(ip)), None)
        if index is None:
            raise JobError(f"{_NAME}: none of --ips {','.join(ips)} is an address of this "
                           f"machine ({socket.gethostname()}): run the launcher on each of them")
    if (index == 0) if ips else _is_local(host):
        return _Master(host, port, nnodes, ips, per_node, env, worker_args, run_dir).run()
    return _node(host, port, index, per_node)


class _Master:
    def __init__(self, host, port, nnodes, ips, per_node, env, worker_args, run_dir):
        self.host, self.port, self.nnodes, self.ips = host, port, nnodes, ips
        self.per_node, self.env, self.worker_args, self.run_dir = (per_node, env, worker_args,
                                                                   run_dir)
        self.nodes = []  # (index or None, hostname, address, nproc, connection, reader)

    def _listen(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        addrs = _addresses(self.host) or ["0.0.0.0"]
        try:
            # every interface: a hostname may resolve to a loopback address here (127.0.1.1)
            # while the other machines reach this one by another
            s.bind(("0.0.0.0", self.port))
        except OSError as e:
            s.close()
            raise JobError(
                f"{_NAME}: the master port {self.port} on {self.host} ({addrs[0]}) is in use "
                f"({e.strerror}): another job's master, or an earlier one still ending. Choose "
                f"a free port with --master {self.host}:PORT (or {PORT_ENV} with --ips) on "
                "every machine") from None
        s.listen(64)
        return s

    def _gather(self, server):
        """Wait for the other machines to join; the error names the missing ones."""
        limit = rendezvous_timeout()
        deadline = time.monotonic() + limit
        while len(self.nodes) < self.nnodes - 1:
            left = deadline - time.monotonic()
            if left <= 0:
                raise JobError(self._missing(limit))
            server.settimeout(min(left, 1.0))
            try:
                conn, peer = server.accept()
            except TimeoutError:
                continue
            reader = _Lines(conn)
            try:
                msg = reader.next(timeout=10)
            except TimeoutError:
                msg = None
            if not isinstance(msg, dict) or msg.get("hello") != _HELLO:
                conn.close()
                continue
            index = msg.get("index")
            if self.ips and (index is None or not 0 < index < len(self.ips)
                             or any(n[0] == index for n in self.nodes)):
                _send(conn, error=f"{_NAME}: machine {msg.get('host')} is not one of the other "
                                  f"--ips {','.join(self.ips[1:])}, or joined twice")
                conn.close()
                continue
            self.nodes.append((index, msg.get("host", peer[0]), peer[0], int(msg["nproc"]),
                               conn, reader))
            _send(conn, joined=True)
        return self.nodes[0][4].getsockname()[0] if self.nodes else _addresses(self.host)[0]

    def _missing(self, limit):
        joined = [n[1] for n in self.nodes]
        if self.ips:
            have = {n[0] for n in self.nodes} | {0}
            missing = [ip for i, ip in enumerate(self.ips) if i not in have]
            which = f"missing: {', '.join(missing)}"
        else:
            which = f"{self.nnodes - 1 - len(self.nodes)} more machine(s) did not join"
        return (f"{_NAME}: waited {limit:g} s ({TIMEOUT_ENV}) for {self.nnodes} machines at the "
                f"master {self.host}:{self.port}; joined: {socket.gethostname()} (master)"
                + "".join(f", {h}" for h in joined) + f"; {which}. Start the launcher on every "
                "machine with the same --nnodes and --master (or --ips)")

    def run(self):
        server = self._listen()
        try:
            try:
                me = self._gather(server)
            except JobError as e:
                for n in self.nodes:
                    _try_send(n[4], error=str(e))
                raise
            if self.ips:
                self.nodes.sort(key=lambda n: n[0])
            addresses = [me] + [n[2] for n in self.nodes]
            slots = [self.per_node] + [n[3] for n in self.nodes]
            env = dict(self.env)
            env["PADDLE_HL_IPS"] = ",".join(addresses)
            env["PADDLE_HL_SLOTS"] = ",".join(map(str, slots))
            env["PADDLE_HL_MASTER"] = f"{self.host}:{self.port}"  # the ranks' PADDLE_MASTER
            hosts = [f"{a}:{k}" for a, k in zip(addresses, slots)]
            local = []

            def manual(proxies):
                for i, cmd in enumerate(proxies):
                    if i == 0:
                        local.append(_start_proxy(cmd, self.run_dir))
                    elif i - 1 < len(self.nodes):
                        _try_send(self.nodes[i - 1][4], launch=cmd)

            code, message = 1, None
            try:
                code = run(sum(slots), self.worker_args, env, self.run_dir, hosts=hosts,
                           monitor_host=me, manual=manual)
            except JobError as e:
                code, message = e.exit_code, str(e)
                raise
            finally:
                for n in self.nodes:
                    _try_send(n[4], done=code, message=message)
                for p in local:
                    _kill_group(p)
            return code
        finally:
            server.close()
            for n in self.nodes:
                n[4].close()


def _try_send(conn, **msg):
    try:
        _send(conn, **msg)
    except OSError:
        pass


def _kill_group(proc, wait=3.0):
    """End a process started in a session of its own, and whatever it started."""
    for sig, t in ((signal.SIGTERM, wait), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=t)
            break
        except subprocess.TimeoutExpired:
            continue
    try:
        proc.wait(timeout=1)
    except subprocess.TimeoutExpired:
        pass


def _start_proxy(cmd, folder):
    """Start MPI's proxy for this machine (in a session of its own). Its own messages go to a
    file in ``folder`` (the ranks' output goes through mpiexec): when a machine goes down, the
    proxies complain before the monitor names the rank that died."""
    with open(os.path.join(folder, "proxy.log"), "ab") as log:
        return subprocess.Popen(shlex.split(cmd), start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


def _proxy_said(folder, limit=2000):
    """The end of what MPI's proxy on this machine said, for an error (empty if nothing)."""
    try:
        with open(os.path.join(folder, "proxy.log"), encoding="utf-8", errors="replace") as f:
            text = f.read()[-limit:].strip()
    except OSError:
        return ""
    return f"\nMPI's proxy on this machine said:\n{text}" if text else ""


class _Stopped(BaseException):
    """This machine's launcher was told to stop (SIGTERM, SIGHUP)."""


def _stop_on_signals():
    """SIGTERM and SIGHUP end this machine's part of the job through the clean-up (its proxy
    and ranks stopped, their shared memory removed): the default action would leave them
    running. The master then names the ranks that ended."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum, frame):
        raise _Stopped(signal.Signals(signum).name)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stop)


def _node(host, port, index, per_node):
    """A machine other than the master's: join, run the proxy the master hands over, and end
    with the job."""
    limit = rendezvous_timeout()
    deadline = time.monotonic() + limit
    conn = None
    while conn is None:
        try:
            conn = socket.create_connection((host, port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise JobError(f"{_NAME}: could not reach the master at {host}:{port} within "
                               f"{limit:g} s ({TIMEOUT_ENV}): start the launcher on the "
                               "master's machine too") from None
            time.sleep(0.2)
    reader = _Lines(conn)
    started = time.time()
    proxy = None
    _stop_on_signals()
    try:
        _send(conn, hello=_HELLO, host=socket.gethostname(), nproc=per_node, index=index)
        while True:
            try:
                msg = reader.next(timeout=None)
            except TimeoutError:
                continue
            if msg is None:
                raise JobError(f"{_NAME}: the master at {host}:{port} went away; this "
                               f"machine's part of the job ({socket.gethostname()}) was stopped")
            if "error" in msg:
                raise JobError(msg["error"])
            if "launch" in msg and proxy is None:
                log_dir = tempfile.mkdtemp(prefix="paddle_hl_node_")
                proxy = _start_proxy(msg["launch"], log_dir)
            if "done" in msg:
                code = int(msg["done"])
                if proxy is not None:
                    try:
                        proxy.wait(timeout=5 if code == 0 else 1)
                    except subprocess.TimeoutExpired:
                        pass
                if code != 0:
                    message = msg.get("message") or f"{_NAME}: the job failed (exit status {code})"
                    # MPI's own complaints only when nothing named a rank (the proxy here
                    # may be what failed, e.g. it could not reach the master)
                    unexplained = proxy is not None and "mpiexec exited with code" in message
                    said = _proxy_said(log_dir) if unexplained else ""
                    raise JobError(message + said, exit_code=code)
                return 0
    except _Stopped as e:
        raise JobError(f"{_NAME}: this machine's launcher ({socket.gethostname()}) received "
                       f"{e.args[0]}: its part of the job was stopped", exit_code=1) from None
    finally:
        if proxy is not None:
            _kill_group(proxy)
            sweep_shm(started)
            shutil.rmtree(log_dir, ignore_errors=True)
        conn.close()
