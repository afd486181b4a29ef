"""A throw-away PostgreSQL server for the catalog tests: Debian's binaries (scripts/setup.d/30-postgres.sh), a
temporary data directory owned by the ``postgres`` user (the server refuses to run as root), a Unix socket
only (no TCP port is opened), stopped and removed at the end of the session."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass
class PgServer:
    root: Path
    socket_dir: Path
    port: int
    bin: Path
    as_user: list[str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def new_database(self) -> str:
        """A fresh, empty database's URL (one per test: tests never see each other's rows)."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate",
                        "-w", "stop"], capture_output=True, check=False, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def start_postgres() -> PgServer | str:
    """A running server, or the reason none could be started (for a skip message)."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins:
        return "PostgreSQL is not installed (scripts/setup.d/30-postgres.sh installs Debian's postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'launchcard[postgres]')"
    bindir = Path(bins[-1]).parent
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="lc-pg-"))
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root without runuser: cannot start PostgreSQL as the postgres user"
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres", "postgres")
    root.chmod(0o700)
    sock = root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(sock, "postgres", "postgres")
    port = 5400 + os.getpid() % 500
    init = subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(root / "data"), "-A", "trust", "-U",
                           "postgres", "--no-sync", "-E", "UTF8"], capture_output=True, text=True, check=False,
                          timeout=180)
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        return f"initdb failed: {init.stderr.strip().splitlines()[-1] if init.stderr.strip() else init.returncode}"
    opts = f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
    start = subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(root / "data"), "-o", opts, "-l",
                            str(root / "log"), "-w", "-t", "120", "start"], capture_output=True, text=True,
                           check=False, timeout=180)
    server = PgServer(root, sock, port, bindir, as_user)
    if start.returncode != 0:
        log = (root / "log").read_text(errors="replace") if (root / "log").exists() else start.stderr
        server.stop()
        return f"pg_ctl start failed: {log.strip().splitlines()[-1] if log.strip() else start.returncode}"
    return server
