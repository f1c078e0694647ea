"""A one-node SLURM cluster on localhost for tests (Debian's slurmctld, slurmd, munge; no
accounting database; run as root without cgroups).

State, spool, logs and PID files live in a private folder. The configuration is written to the
standard /etc/slurm/slurm.conf, because the job steps that srun starts inside a batch job look for
it there (``SLURM_CONF`` does not reach them); a configuration already there is moved aside and
restored on exit, unless it is a leftover of this module's own cluster (removed). munged is
reused when already running, else started and stopped again. Every daemon
started is stopped by its PID file on exit, also when the test fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

BINARIES = ("slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "munged", "munge")
MUNGE_PID = Path("/run/munge/munged.pid")
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
# slurmd's job-step sockets are {spool}/{node}_{job}.{step} (e.g. localhost_10.4294967291), and a Unix
# socket path holds at most 107 bytes: a longer spool path fails every job launch ("launch failed
# requeued held"; pytest-xdist's popen-gwN/ in tmp_path was enough)
SPOOL_MAX = 60


def spool_dir(root: Path) -> tuple[Path, bool]:
    """The spool folder for a cluster under ``root``: ``root/spool`` when its path is short enough for
    slurmd's sockets, else a new private folder under /tmp (True: the caller removes it)."""
    spool = Path(root) / "spool"
    if len(str(spool)) <= SPOOL_MAX:
        return spool, False
    return Path(tempfile.mkdtemp(prefix="slurmd-", dir="/tmp")), True


def why_unavailable() -> str | None:
    """None when a cluster can be started here, else the reason it cannot."""
    missing = [b for b in BINARIES if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]
    if missing:
        return f"SLURM/munge binaries not installed ({', '.join(missing)}); apt-get install slurmctld slurmd " \
               "slurm-client munge"
    if os.geteuid() != 0:
        return "starting slurmctld/slurmd/munged needs root"
    if not Path("/etc/munge/munge.key").exists():
        return "no /etc/munge/munge.key (install the munge package)"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _own_leftover(conf: Path) -> bool:
    """True when ``conf`` is a configuration this module wrote (its cluster name)."""
    try:
        return "ClusterName=shuffledptest" in conf.read_text()
    except OSError:
        return False


def _raise_exit(signum, frame):
    raise SystemExit(128 + signum)


class LocalSlurm:
    def __init__(self, root: Path, cpus: int | None = None):
        self.root = Path(root)
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = SYSTEM_CONF
        self.backup = self.root / "slurm.conf.before-test"
        self.pidfiles: list[Path] = []
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.spool, self._own_spool = self.root / "spool", False

    def __enter__(self) -> LocalSlurm:
        # a SIGTERM (an outer timeout, a cancelled CI job) becomes SystemExit, so __exit__ still
        # stops every daemon started here
        self._old_sigterm = None
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, _raise_exit)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.stop()
        finally:
            if self._old_sigterm is not None:
                signal.signal(signal.SIGTERM, self._old_sigterm)

    def _start(self) -> None:
        for sub in ("state", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.spool, self._own_spool = spool_dir(self.root)
        self.spool.mkdir(parents=True, exist_ok=True)
        self._start_munge()
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        # a configuration of this test's own cluster is a leftover of a run that was killed before it
        # could clean up (SIGKILL): not restored, or every later `scontrol` (and so every Snakemake
        # start, whose SLURM plugin asks `scontrol show config`) waits ~9 s for a controller that is gone
        if self.conf.exists() and not _own_leftover(self.conf):
            shutil.move(self.conf, self.backup)
        mem_mb = int(Path("/proc/meminfo").read_text().split()[1]) // 1024 // 2
        self.conf.write_text(
            f"""ClusterName=shuffledptest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=300
StateSaveLocation={self.root}/state
SlurmdSpoolDir={self.spool}
SlurmctldPidFile={self.root}/slurmctld.pid
SlurmdPidFile={self.root}/slurmd.pid
SlurmctldLogFile={self.root}/log/slurmctld.log
SlurmdLogFile={self.root}/log/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={mem_mb} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
        )
        self.pidfiles.append(self.root / "slurmctld.pid")
        subprocess.run(["/usr/sbin/slurmctld", "-f", str(self.conf)], env=self.env, check=True)
        self.pidfiles.append(self.root / "slurmd.pid")
        subprocess.run(["/usr/sbin/slurmd", "-f", str(self.conf), "-N", "localhost"], env=self.env, check=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            r = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if r.returncode == 0 and ("idle" in r.stdout or "mix" in r.stdout):
                return
            time.sleep(1)
        raise RuntimeError(f"SLURM node did not become idle within 60 s: {self.logs()}")

    def _start_munge(self) -> None:
        pid = _read_pid(MUNGE_PID)
        if pid and _alive(pid):
            return
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True)
        self.pidfiles.insert(0, MUNGE_PID)  # stopped last
        for _ in range(20):
            if subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0:
                return
            time.sleep(0.5)
        raise RuntimeError("munged did not answer")

    def stop(self) -> None:
        for pidfile in reversed(self.pidfiles):
            pid = _read_pid(pidfile)
            if not pid or not _alive(pid):
                continue
            os.kill(pid, signal.SIGTERM)
            for _ in range(40):
                if not _alive(pid):
                    break
                time.sleep(0.5)
            else:
                os.kill(pid, signal.SIGKILL)
        self.pidfiles.clear()
        if self.backup.exists():
            shutil.move(self.backup, self.conf)
        elif self.conf.exists() and _own_leftover(self.conf):
            self.conf.unlink()
        if self._own_spool:
            shutil.rmtree(self.spool, ignore_errors=True)
            self._own_spool = False

    def logs(self) -> str:
        out = []
        for name in ("slurmctld.log", "slurmd.log"):
            path = self.root / "log" / name
            if path.exists():
                out.append(f"--- {name}\n" + "\n".join(path.read_text().splitlines()[-30:]))
        return "\n".join(out)
