"""Hosts for one test: Linux network namespaces joined by veth pairs and two bridges, a
PostgreSQL server of its own on one of them, and processes started on each with
``ip netns exec``.

The database network joins every host (the database's among them); the front network joins
the API hosts to the test itself, as clients reach them. ``cut(host)`` takes a host's link
to the database network down (its packets are dropped, as on a broken cable or a switch
port gone) while its clients still reach it; ``mend(host)`` brings it back. Everything is
named after a tag of the run (two runs go side by side) and taken down at the end,
whatever happened: the processes, the namespaces, their links, the bridges, the server's
files. Needs root, iproute2, setpriv and PostgreSQL's server programs (``missing()``
says which is not there)."""

from __future__ import annotations

import glob
import ipaddress
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

DATABASE_NET = "10.77.0"  # only inside the run's namespaces: the same in every run
DATABASE_PORT = 5432


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def missing() -> str | None:
    """Why this machine cannot make the hosts (None when it can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for program in ("ip", "setpriv"):
        if shutil.which(program) is None:
            return f"no {program} command (iproute2, util-linux)"
    if _postgres_bin() is None:
        return "no PostgreSQL server programs (/usr/lib/postgresql/*/bin/initdb)"
    probe = f"abate-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@dataclass
class Host:
    name: str
    namespace: str
    address: str  # on the database network
    link: str  # the root end of its veth to the database network (what ``cut`` takes down)
    front: str | None = None  # its address as the test reaches it (API hosts)


@dataclass
class Hosts:
    tag: str
    work: Path  # logs; the database server's files live in a folder of its own (server_dir)
    front_net: str
    hosts: dict[str, Host] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    server_dir: Path | None = None

    # ------------------------------------------------------------------ the network

    def add(self, name: str, number: int, *, front: bool = False) -> Host:
        """A host numbered ``number`` (2 to 254, its addresses' last part): its namespace,
        its link to the database network and, with ``front``, one to the test's."""
        namespace = f"abate-{self.tag}-{name}"
        _ip("netns", "add", namespace)
        host = Host(name, namespace, f"{DATABASE_NET}.{number}", f"ab{self.tag}{number}b")
        self.hosts[name] = host
        _ip("-n", namespace, "link", "set", "lo", "up")
        self._plug(host, host.link, "back0", f"ab{self.tag}b", f"{host.address}/24")
        if front:
            host.front = f"{self.front_net}.{number}"
            self._plug(host, f"ab{self.tag}{number}f", "front0", f"ab{self.tag}f",
                       f"{host.front}/24")
        return host

    def _plug(self, host: Host, outside: str, inside: str, bridge: str, address: str) -> None:
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside,
            "netns", host.namespace)
        self.links.append(outside)
        _ip("link", "set", outside, "master", bridge, "up")
        _ip("-n", host.namespace, "addr", "add", address, "dev", inside)
        _ip("-n", host.namespace, "link", "set", inside, "up")

    def cut(self, name: str) -> None:
        _ip("link", "set", self.hosts[name].link, "down")

    def mend(self, name: str) -> None:
        _ip("link", "set", self.hosts[name].link, "up")

    # ------------------------------------------------------------------ processes

    def start(self, name: str, host: str, *argv: str, env: dict[str, str] | None = None,
              user: str | None = None, cwd: Path | None = None) -> subprocess.Popen:
        """``argv`` on ``host`` (as ``user``), its output in ``work/NAME.log`` (appended: a
        restart keeps the first run's lines). ``ip netns exec`` and ``setpriv`` replace
        themselves with the program, so the process is the program."""
        as_user = (["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"]
                   if user else [])
        with open(self.work / f"{name}.log", "a") as log:
            process = subprocess.Popen(
                ["ip", "netns", "exec", self.hosts[host].namespace, *as_user, *argv],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd or self.work)
        self.processes[name] = process
        return process

    def run(self, host: str, *argv: str, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        """``argv`` on ``host`` to its end, as a person types a command there."""
        return subprocess.run(["ip", "netns", "exec", self.hosts[host].namespace, *argv],
                              env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=self.work)

    def kill(self, name: str) -> None:
        """SIGKILL: no stopping, no clean-up of its own (a crash, the power gone)."""
        process = self.processes[name]
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)

    def stop(self, name: str, timeout: float = 30) -> int:
        """SIGTERM, as systemd stops a service; its exit status."""
        process = self.processes[name]
        if process.poll() is None:
            process.terminate()
        return process.wait(timeout=timeout)

    def log(self, name: str) -> str:
        return (self.work / f"{name}.log").read_text(errors="replace")

    # ------------------------------------------------------------------ the database

    def start_database(self, host: str) -> tuple[str, str]:
        """A PostgreSQL server of its own on ``host``, listening on its address only, with a
        database ``abate``: (URL for the hosts, URL for the test over the server's Unix
        socket, which no network cut reaches)."""
        bin_dir = _postgres_bin()
        assert bin_dir is not None
        self.server_dir = Path(tempfile.mkdtemp(prefix=f"abate-{self.tag}-pg-"))
        shutil.chown(self.server_dir, "postgres", "postgres")
        data = self.server_dir / "data"
        subprocess.run(["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups",
                        "--", str(bin_dir / "initdb"), "-D", str(data), "-A", "trust",
                        "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"],
                       check=True, capture_output=True)
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {DATABASE_NET}.0/24 trust\n")
        address = self.hosts[host].address
        settings = {"listen_addresses": address, "port": str(DATABASE_PORT),
                    "unix_socket_directories": str(self.server_dir), "fsync": "off",
                    "full_page_writes": "off", "max_connections": "200",
                    "shared_buffers": "32MB",
                    # backends of connections whose host was cut off go within seconds
                    "tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2",
                    "tcp_keepalives_count": "3"}
        self.start("postgres", host, str(bin_dir / "postgres"), "-D", str(data),
                   *[f"-c{k}={v}" for k, v in settings.items()], user="postgres",
                   cwd=self.server_dir)
        local = f"postgresql+psycopg://postgres@/abate?host={self.server_dir}"
        self._create_database(local)
        return f"postgresql+psycopg://postgres@{address}:{DATABASE_PORT}/abate", local

    def _create_database(self, local: str) -> None:
        import psycopg

        until = time.monotonic() + 60
        while True:
            try:
                with psycopg.connect(host=str(self.server_dir), user="postgres",
                                     dbname="postgres", autocommit=True) as conn:
                    conn.execute("CREATE DATABASE abate")
                return
            except psycopg.OperationalError:
                if time.monotonic() > until or self.processes["postgres"].poll() is not None:
                    raise RuntimeError(f"the database server did not start:\n"
                                       f"{self.log('postgres')[-2000:]}") from None
                time.sleep(0.2)

    # ------------------------------------------------------------------ the end

    def close(self) -> None:
        """Take everything down, each step even when one before it failed."""
        database = self.processes.pop("postgres", None)
        for process in self.processes.values():
            _quietly(process.kill)
            _quietly(process.wait, timeout=30)
        if database is not None:
            _quietly(database.send_signal, signal.SIGQUIT)  # immediate: nothing to keep
            _quietly(database.wait, timeout=30)
        for host in self.hosts.values():  # anything left in the run's own namespaces
            pids = subprocess.run(["ip", "netns", "pids", host.namespace],
                                  capture_output=True, text=True).stdout.split()
            for pid in pids:
                _quietly(os.kill, int(pid), signal.SIGKILL)
        for host in self.hosts.values():
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True)
        for link in [*self.links, f"ab{self.tag}b", f"ab{self.tag}f"]:
            subprocess.run(["ip", "link", "del", link], capture_output=True)
        if self.server_dir is not None:
            shutil.rmtree(self.server_dir, ignore_errors=True)


def _quietly(step, *args, **kwargs) -> None:
    """A step of the clean-up, whose failure must not stop the next ones (a process gone
    already, one that will not stop: the namespace's own clean-up kills it)."""
    try:
        step(*args, **kwargs)
    except (OSError, subprocess.SubprocessError):
        pass


def _front_net() -> str:
    """A /24 for the front network that the machine does not route already."""
    taken = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
    while True:
        net = f"10.{secrets.choice(range(100, 200))}.{secrets.randbelow(256)}"
        inside = ipaddress.ip_network(f"{net}.0/24")
        routed = [ipaddress.ip_network(word, strict=False) for word in taken.split()
                  if re.fullmatch(r"\d+\.\d+\.\d+\.\d+(/\d+)?", word)]
        if not any(network.overlaps(inside) for network in routed):
            return net


@contextmanager
def several_hosts(work: Path) -> Iterator[Hosts]:
    """The two networks of a run, empty: add hosts with ``Hosts.add``."""
    tag = secrets.token_hex(3)
    hosts = Hosts(tag, work, _front_net())
    try:
        _ip("link", "add", f"ab{tag}b", "type", "bridge")
        _ip("link", "set", f"ab{tag}b", "up")
        _ip("link", "add", f"ab{tag}f", "type", "bridge")
        _ip("addr", "add", f"{hosts.front_net}.1/24", "dev", f"ab{tag}f")
        _ip("link", "set", f"ab{tag}f", "up")
        yield hosts
    finally:
        hosts.close()
