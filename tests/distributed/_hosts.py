"""Simulated hosts for the multi-host tests: a few "machines" on this one machine.

Each host is a set of namespaces held open by one small process (``sleep``):

* its own network namespace, with an interface ``eth0`` on a private bridge and its own
  address (``10.213.0.N/24``); the bridge lives in a namespace of its own too, so no address
  or route is added outside the namespaces made here, and traffic cannot leave them;
* its own UTS namespace: its hostname is ``hN``, so the ranks see different machines;
* its own mount namespace, with a private tmpfs on ``/dev/shm`` (the ranks of one host cannot
  see another's shared-memory segments) and an ``/etc/hosts`` naming every host;
* its own IPC namespace: without it MPI's transport finds the other host's processes on the
  same kernel and moves the data through System V shared memory instead of the network (the
  test of the data path checks that the bytes go through the host's interface).

A command enters a host with ``nsenter`` (all of these namespaces; processes stay in this
machine's process namespace, so the tests see and kill them by pid). MPI's launcher
(``mpiexec``) reaches the other hosts through :attr:`Cluster.launcher`, a script that takes
``ssh``'s arguments (``[options] host command...``) and runs the command inside that host:
no ssh daemon is needed.

Everything is named after the test process's pid (and a counter), so parallel test workers do
not collide, and removed by :meth:`Cluster.close` (a fixture finaliser), failures included.
Needs root, ``ip`` (iproute2 with ``netns``), ``nsenter`` and ``unshare``; :func:`missing`
says what is missing, for the tests' skip reason.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SUBNET = "10.213.0"
_COUNT = itertools.count()


def missing():
    """Why simulated hosts cannot be made here (None when they can)."""
    if not sys.platform.startswith("linux"):
        return "simulated hosts need Linux namespaces"
    if os.geteuid() != 0:
        return "simulated hosts need root (network namespaces)"
    for tool in ("ip", "nsenter", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"simulated hosts need {tool!r} (apt-get install iproute2 util-linux)"
    probe = f"phlprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"'ip netns add' failed: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args):
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


class Host:
    """One simulated machine: ``name`` (its hostname), ``address``, ``netns`` and ``pid`` (the
    process holding its namespaces)."""

    def __init__(self, name, address, netns, holder):
        self.name = name
        self.address = address
        self.netns = netns
        self.holder = holder

    @property
    def pid(self):
        return self.holder.pid

    def enter(self):
        """The command prefix that runs a command inside this host."""
        return ["nsenter", "-t", str(self.pid), "-n", "-u", "-m", "-i", "--"]

    def popen(self, cmd, **kw):
        """Start ``cmd`` (a list) inside this host."""
        kw.setdefault("start_new_session", True)
        return subprocess.Popen(self.enter() + list(cmd), **kw)

    def run(self, cmd, **kw):
        """Run ``cmd`` inside this host and wait for it (``subprocess.run``'s arguments)."""
        return subprocess.run(self.enter() + list(cmd), **kw)

    def pids(self):
        """The processes running in this host (its network namespace), the holder excluded."""
        r = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True)
        mine = {self.pid, self.holder.proc.pid}
        return [int(p) for p in r.stdout.split() if p.strip() and int(p) not in mine]

    def shm_files(self):
        """The files in this host's ``/dev/shm``."""
        r = self.run(["ls", "-A", "/dev/shm"], capture_output=True, text=True)
        return r.stdout.split()

    def kill(self):
        """The host fails: every process on it is killed at once (the namespaces stay)."""
        for _ in range(5):
            pids = self.pids()
            if not pids:
                return
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)

    def freeze(self):
        """The host hangs: every process on it is stopped (SIGSTOP). Returns the pids."""
        pids = self.pids()
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        return pids


class Cluster:
    """``n`` simulated hosts ``h1`` ... ``hn`` on one bridge (see the module docstring)."""

    def __init__(self, n=2):
        self.tag = f"phl{os.getpid()}x{next(_COUNT)}"
        self.dir = tempfile.mkdtemp(prefix=f"{self.tag}_")
        self.switch = f"{self.tag}sw"
        self.hosts = []
        self._netns = []
        try:
            self._build(n)
        except BaseException:
            self.close()
            raise

    def _build(self, n):
        _ip("netns", "add", self.switch)
        self._netns.append(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        hosts_file = os.path.join(self.dir, "hosts")
        with open(hosts_file, "w") as f:
            f.write("127.0.0.1 localhost\n")
            for i in range(1, n + 1):
                f.write(f"{SUBNET}.{i} h{i}\n")
        for i in range(1, n + 1):
            ns = f"{self.tag}h{i}"
            _ip("netns", "add", ns)
            self._netns.append(ns)
            _ip("-n", self.switch, "link", "add", f"v{i}", "type", "veth", "peer", "name",
                "eth0", "netns", ns)
            _ip("-n", self.switch, "link", "set", f"v{i}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{SUBNET}.{i}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            # the holder: new UTS and mount namespaces inside the network namespace, with the
            # hostname, a private /dev/shm and /etc/hosts; it then sleeps until closed
            script = (f"hostname h{i} && mount -t tmpfs -o size=512m tmpfs /dev/shm && "
                      f"mount --bind {hosts_file} /etc/hosts && echo ready && exec sleep 1d")
            holder = subprocess.Popen(
                ["ip", "netns", "exec", ns, "unshare", "-u", "-m", "-i", "--fork",
                 "--propagation", "private", "sh", "-c", script],
                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, text=True)
            line = holder.stdout.readline()
            host = Host(f"h{i}", f"{SUBNET}.{i}", ns, holder)
            self.hosts.append(host)
            if line.strip() != "ready":
                raise RuntimeError(f"simulated host h{i} did not start (exit {holder.wait()})")
            # the namespaces are held by "unshare"'s child, which has exec'd sleep
            host.holder = _Holder(holder, _child_in(holder.pid))
        self.launcher = os.path.join(self.dir, "enter_host")
        table = " ".join(f"{h.name}={h.pid} {h.address}={h.pid}" for h in self.hosts)
        with open(self.launcher + ".part", "w") as f:
            f.write(_LAUNCHER.format(table=table))
        os.chmod(self.launcher + ".part", 0o755)
        os.replace(self.launcher + ".part", self.launcher)

    def env(self):
        """The environment under which mpiexec reaches the hosts with :attr:`launcher`."""
        env = dict(os.environ)
        env["HYDRA_LAUNCHER"] = "ssh"
        env["HYDRA_LAUNCHER_EXEC"] = self.launcher
        return env

    def __getitem__(self, i):
        return self.hosts[i]

    def close(self):
        """Kill everything on the hosts and remove the namespaces and files."""
        for h in self.hosts:
            h.kill()
            h.holder.kill()
        for ns in reversed(self._netns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self._netns = []
        self.hosts = []
        shutil.rmtree(self.dir, ignore_errors=True)


class _Holder:
    """The process holding a host's namespaces (``sleep``), and the ``ip netns exec`` above it."""

    def __init__(self, proc, pid):
        self.proc = proc
        self.pid = pid

    def kill(self):
        for p in (self.pid, self.proc.pid):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _child_in(pid, timeout=5.0):
    """The pid (on this machine) of the ``sleep`` that ``unshare`` (``pid``) forked into the
    host's namespaces."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = [int(k) for k in f.read().split()]
            for k in kids:
                with open(f"/proc/{k}/comm") as f:
                    if f.read().strip() == "sleep":
                        return k
        except OSError:
            pass
        time.sleep(0.01)
    raise RuntimeError(f"simulated host: the process holding its namespaces (under {pid}) "
                       "was not found")


# ssh's calling convention: [options] host command... (the command as one shell line)
_LAUNCHER = """#!/bin/sh
# Run a command on a simulated host (called by mpiexec in place of ssh).
while [ $# -gt 0 ]; do
  case "$1" in
    -[oilpFJ]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
for entry in {table}; do
  if [ "${{entry%%=*}}" = "$host" ]; then
    exec nsenter -t "${{entry#*=}}" -n -u -m -i -- sh -c "$*"
  fi
done
echo "enter_host: no simulated host $host" >&2
exit 255
"""
