"""The one place that writes files: Parquet (with provenance), Markdown/text, JSON and figures.

Every writer goes through :func:`atomic_write`: the content is written to a temporary file in the
destination's own folder, flushed and ``fsync``-ed, given the ordinary file mode (``0666`` minus the
umask, i.e. ``0644`` under the usual umask 022), and only then renamed onto the destination (the
folder is ``fsync``-ed too). A job that is killed mid-write therefore leaves either the old file
or none, never a partial one; a leftover ``.<name>.*.part`` temporary is the only trace.

Processed tables store a JSON object under the Parquet key-value metadata key ``shuffledp``
(their *provenance*: dataset, source, checksum, stand-in flag, ...); :func:`read_provenance` is
the one reader of it.

Every table a workflow job writes also carries its *job record* under the key ``shuffledp_job``
(:func:`read_job_record`): the stage, step and wildcards of the job that wrote it, the fingerprint
of that job's spec (the SHA-256 of its canonical JSON, as its spec file is named) and the data
sources it derives from (dataset, real or stand-in, checksum where known), gathered from its inputs,
and the name of the job's output the table is (``output``: a job's run table and its timings table
carry different records, so one put in place of the other is refused).
``shuffledp step`` sets the record (:func:`job_record_context`) and checks every input table's
record against what the job expects before it runs. The record holds no time and no absolute
path: the same config gives byte-identical files.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and pyarrow load where a table is written or read (a job that only copies or
    import pandas as pd  # writes text pays neither: pandas alone is about 0.25 s of CPU per process)
    import pyarrow as pa

META_KEY = b"shuffledp"
JOB_KEY = b"shuffledp_job"
_JOB_RECORD: dict | None = None  # the record of the job this process runs (job_record_context)
_OUTPUT_NAMES: dict[str, str] = {}  # absolute path -> the name of the job's output it is (job_record_context)
SOURCE_KEYS = ("dataset", "source", "standin", "sha256_uncompressed", "sha256", "md5")

__all__ = [
    "META_KEY",
    "atomic_write",
    "check_links_inside",
    "file_mode",
    "markdown_table",
    "job_record_context",
    "read_job_record",
    "read_provenance",
    "save_figure_file",
    "save_figure_files",
    "write_bytes",
    "write_json",
    "write_table",
    "write_text",
]


def file_mode() -> int:
    """The mode an ordinary ``open(path, "w")`` would give: 0o666 minus the process umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _host() -> str:
    return "".join(c if c.isalnum() or c == "-" else "_" for c in socket.gethostname()) or "host"


def temp_file(path: str | os.PathLike, suffix: str = ".part", sweep: bool = True) -> str:
    """A new empty temporary file next to ``path``: ``.<name>.<host>.<pid>.<random><suffix>``.

    Temporaries that a process killed with SIGKILL left for the same ``path`` (same host, that
    process no longer running) are removed first, so a resumed run leaves no ``.part`` behind
    (``sweep=False``: not here, each call lists the folder; the caller sweeps the folder once,
    :func:`sweep_temporaries`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    host = _host()
    for old in path.parent.glob(f".{glob.escape(path.name)}.{host}.*{suffix}") if sweep else ():
        pid = old.name[len(path.name) + len(host) + 3:].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            old.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{host}.{os.getpid()}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    return tmp


def sweep_temporaries(folder: str | os.PathLike, suffix: str = ".part") -> int:
    """Remove the temporaries (:func:`temp_file`) directly in ``folder`` that a process of this host
    that is no longer running left; returns how many. Regular files only, never a link."""
    host, removed = _host(), 0
    marker = f".{host}."
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(".") and name.endswith(suffix) and marker in name):
                continue
            pid = name.rsplit(marker, 1)[1].split(".", 1)[0]
            if pid.isdigit() and not _alive(int(pid)) and entry.is_file(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)
                removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def check_links_inside(root: str | os.PathLike, base: str | os.PathLike | None = None) -> None:
    """No symbolic link under ``root`` (a file's or a folder's, dangling ones too) resolves outside
    ``base`` (default: the working folder): Snakemake's own writes (benchmarks, logs) follow links,
    so a link planted there would make the workflow write outside its folder. Raises a
    :class:`~shuffledp.errors.DataError` naming the first such link, before any job runs."""
    from shuffledp.errors import DataError

    base = Path(base or os.getcwd()).resolve()
    root = Path(root)
    if not root.exists() and not root.is_symlink():
        return
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(folder) / name
            if not path.is_symlink():
                continue
            target = path.resolve()
            if target != base and base not in target.parents:
                raise DataError(f"{path}: a symbolic link to {target}, outside the working folder {base}: the "
                                f"workflow writes only inside it; remove the link (rm {path}) and rerun")


OUTPUT_RECORDS = ".outputs"  # <results>/.outputs: each workflow job's output hashes (shuffledp verify)


def file_version(path: str | os.PathLike) -> tuple[str, int, int]:
    """``(path, size, modification time in ns)``: the key of a per-process cache of what was read from
    a file (a rewritten file is read again)."""
    st = os.stat(path)
    return str(path), st.st_size, st.st_mtime_ns


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(outputs: Mapping) -> list[str]:
    out = []
    for paths in outputs.values():
        out += list(paths.values()) if isinstance(paths, Mapping) else [paths]
    return out


def record_name(record: Mapping) -> str:
    """``<stage>/<step>[_<wildcard value>...].json``: a job's identity as a file name."""
    values = [str(v) for _, v in sorted(dict(record.get("wildcards") or {}).items())]
    return f"{record['stage']}/" + "_".join([str(record["step"]), *values]) + ".json"


def write_output_record(io_path: str | os.PathLike, record: Mapping, outputs: Mapping) -> str | None:
    """After a workflow job: its output record beside its io file's folder (``<results>/.jobs`` ->
    ``<results>/.outputs``); None (nothing written) for an io file outside a ``.jobs`` folder or
    outside the working folder."""
    folder = Path(io_path).parent
    here = Path.cwd().resolve()
    if folder.name != ".jobs" or here not in folder.resolve().parents:  # never written outside the working folder
        return None
    hashes = {p: sha256_file(p) for p in sorted(_files(outputs)) if os.path.isfile(p)}
    job = {k: record[k] for k in ("stage", "step", "wildcards", "spec") if k in record}
    path = folder.parent / OUTPUT_RECORDS / record_name(job)
    write_text(path, json.dumps({"job": job, "outputs": hashes}, sort_keys=True, indent=1) + "\n")
    return str(path)


def atomic_write(path: str | os.PathLike, writer: Callable[[str], object], durable: bool = True) -> None:
    """Call ``writer(tmp_path)`` and move the finished, fsync-ed file onto ``path``.

    The temporary file lives in ``path``'s folder (so the rename is atomic) and is removed when
    ``writer`` fails or the process is interrupted by an exception. ``durable=False`` skips the two
    fsyncs (the rename still shows no partial file) and the folder's sweep of old temporaries: for a
    file that is checked and rewritten whenever it is used (the workflow's job files,
    :func:`shuffledp.stages.content_file`), where thousands of fsyncs made a first dry run wait on
    the disk.
    """
    path = Path(path)
    tmp = temp_file(path, sweep=durable)
    try:
        writer(tmp)
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_bytes(path: str | os.PathLike, data: bytes, durable: bool = True) -> None:
    def _w(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)

    atomic_write(path, _w, durable)


def write_text(path: str | os.PathLike, text: str, durable: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable)


def write_json(path: str | os.PathLike, obj: object) -> None:
    """Deterministic JSON (sorted keys, NaN/inf refused) followed by a newline."""
    write_text(path, json.dumps(obj, sort_keys=True, indent=1, allow_nan=False, default=_default) + "\n")


def write_table(table: pa.Table | pd.DataFrame, path: str | os.PathLike, provenance: Mapping | None = None) -> None:
    """The one Parquet writer: ``table`` (a DataFrame without its index, or an Arrow table) as zstd
    Parquet, atomically, with ``provenance`` under the ``shuffledp`` key (when given) and no pandas
    metadata (it names the pandas version: the bytes would depend on the environment)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pd = sys.modules.get("pandas")  # a DataFrame exists only where pandas was imported
    if pd is not None and isinstance(table, pd.DataFrame):
        table = pa.Table.from_pandas(table, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta.pop(b"pandas", None)  # pandas metadata is not needed and would differ across pandas versions
    if provenance is not None:
        meta[META_KEY] = json.dumps(dict(provenance), sort_keys=True, default=_default).encode()
    if _JOB_RECORD is not None:
        record = dict(_JOB_RECORD)
        name = _OUTPUT_NAMES.get(os.path.abspath(path))
        if name is not None:
            record["output"] = name
        own = source_of(provenance or {})
        if own is not None:
            record["sources"] = merge_sources(record.get("sources", []), [own])
        meta[JOB_KEY] = json.dumps(record, sort_keys=True, default=_default).encode()
    table = table.replace_schema_metadata(meta or None)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def read_provenance(path: str | os.PathLike) -> dict:
    """The provenance dict of a table written by :func:`write_table` (``{}`` if absent).

    A missing file raises ``FileNotFoundError`` naming it; a file that is not Parquet raises
    ``ValueError`` naming it.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    raw = _schema_metadata(path).get(META_KEY)
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{path}: provenance metadata is not valid JSON ({exc})") from exc


def source_of(provenance: Mapping) -> dict | None:
    """The data source a provenance describes (dataset, source, stand-in flag, checksums), or None."""
    if not isinstance(provenance, Mapping) or "dataset" not in provenance:
        return None
    return {k: provenance[k] for k in SOURCE_KEYS if k in provenance}


def merge_sources(*lists) -> list[dict]:
    """The distinct sources of several lists, in a fixed order (by their JSON)."""
    seen = {}
    for items in lists:
        for item in items or []:
            seen[json.dumps(item, sort_keys=True, default=_default)] = item
    return [seen[k] for k in sorted(seen)]


class job_record_context:  # noqa: N801 - used as a context manager, like open()
    """``with job_record_context(record, outputs):`` every table written inside carries ``record``
    (the writing job's stage, step, wildcards, spec fingerprint and sources) under :data:`JOB_KEY`,
    and, when its path is one of ``outputs`` (output name -> path, or -> ``{value: path}`` for an
    output list), that output's name as ``output``."""

    def __init__(self, record: Mapping, outputs: Mapping | None = None):
        self.record = dict(record)
        self.names: dict[str, str] = {}
        for name, paths in (outputs or {}).items():
            for p in paths.values() if isinstance(paths, Mapping) else [paths]:
                self.names[os.path.abspath(p)] = name

    def __enter__(self):
        global _JOB_RECORD, _OUTPUT_NAMES
        self._old, _JOB_RECORD = _JOB_RECORD, self.record
        self._old_names, _OUTPUT_NAMES = _OUTPUT_NAMES, self.names
        return self.record

    def __exit__(self, *exc):
        global _JOB_RECORD, _OUTPUT_NAMES
        _JOB_RECORD, _OUTPUT_NAMES = self._old, self._old_names
        return False


def _schema_metadata(path: str | os.PathLike) -> dict:
    """A Parquet file's schema metadata (bytes -> bytes); ValueError naming the file if unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path).metadata or {}
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from exc


def read_job_record(path: str | os.PathLike) -> dict | None:
    """The job record of a table (see the module doc), or None if it has none."""
    raw = _schema_metadata(path).get(JOB_KEY)
    if not raw:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


# fixed metadata of every figure: no dates, no library versions, so a figure's bytes depend only on
# its content (and matplotlib's rendering)
FIGURE_METADATA = {
    "pdf": {"Creator": "shuffledp", "Producer": "shuffledp", "CreationDate": None, "ModDate": None},
    "png": {"Software": "shuffledp"},
}


def save_figure_file(fig, path: str | os.PathLike, **savefig_kwargs) -> None:
    """The one figure saver: ``fig.savefig`` atomically, the format from the file's extension, with
    the fixed metadata of :data:`FIGURE_METADATA` (a caller cannot pass its own)."""
    fmt = Path(path).suffix.lstrip(".").lower()
    if fmt not in FIGURE_METADATA:
        raise ValueError(f"{path}: figures are written as .pdf or .png")
    if "metadata" in savefig_kwargs or "format" in savefig_kwargs:
        raise TypeError("save_figure_file fixes the format and metadata itself")
    meta = FIGURE_METADATA[fmt]
    with _no_placeholder_layout(fig):
        atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, metadata=meta, **savefig_kwargs))


def save_figure_files(fig, pdf: str | os.PathLike, png: str | os.PathLike, *, dpi: float,
                      tight: bool = False) -> None:
    """Write one figure as ``pdf`` and as ``png`` at ``dpi`` (each as :func:`save_figure_file` does:
    atomically, with the fixed metadata), with as few passes over the figure as the two files need.

    The figure is set to the PNG's dpi first: the PNG is then drawn by the renderer its canvas keeps
    for that size and dpi, which also measured every text of a layout done at that dpi (a figure made
    with ``plt.subplots(dpi=...)`` and then ``fig.tight_layout()``), so the PNG measures no text again.

    With ``tight`` the files hold the figure's tight bounding box padded by ``savefig.pad_inches``, as
    ``savefig(bbox_inches="tight")`` cuts it, but measured once, by the PNG's (Agg) renderer: it draws
    the whole figure, measures the box (every text extent is already known to it), the box is moved
    to the nearest whole pixel (:func:`_pixel_box`) and the PNG is cut out of that drawing (the same
    pixels as ``savefig`` with that box); the PDF is saved with the same box, without a draw of its
    own to measure it; its padding beyond the canvas is the white figure face, as savefig draws it.
    Content beyond the figure (or a figure face not white) is drawn anew by ``savefig``. The figure's
    dpi is put back afterwards."""
    dpi_before = fig.dpi
    if dpi_before != dpi:
        fig.set_dpi(dpi)
    try:
        _save_pair(fig, pdf, png, dpi, tight)
    finally:
        if fig.dpi != dpi_before:
            fig.set_dpi(dpi_before)


def _save_pair(fig, pdf, png, dpi: float, tight: bool) -> None:
    if not tight:
        save_figure_file(fig, png, dpi=dpi)
        save_figure_file(fig, pdf)
        return
    import numpy as np

    with _no_placeholder_layout(fig):
        fig.canvas.draw()  # the PNG's drawing, on the renderer the canvas keeps (public: draw, get_renderer)
        image = np.asarray(fig.canvas.buffer_rgba())
        tight = fig.get_tightbbox(fig.canvas.get_renderer())
    box, (r0, r1, c0, c1) = _pixel_box(tight, dpi, image.shape[0])
    height, width = image.shape[:2]
    inside = tight.x0 * dpi >= 0 and tight.x1 * dpi <= width and 0 <= tight.y0 * dpi and tight.y1 * dpi <= height
    if not (inside and tuple(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)):
        save_figure_file(fig, png, dpi=dpi, bbox_inches=box)  # drawn anew: content beyond the canvas
    else:
        from matplotlib.image import imsave

        # the padding beyond the canvas is the white figure face, as savefig draws it
        crop = np.full((r1 - r0, c1 - c0, 4), 255, dtype=np.uint8)
        rs, cs = slice(max(r0, 0), min(r1, height)), slice(max(c0, 0), min(c1, width))
        crop[rs.start - r0:rs.stop - r0, cs.start - c0:cs.stop - c0] = image[rs, cs]
        atomic_write(png, lambda tmp: imsave(tmp, crop, format="png", origin="upper", dpi=dpi,
                                              metadata=FIGURE_METADATA["png"]))
    save_figure_file(fig, pdf, bbox_inches=box)


def _pixel_box(tight, dpi: float, height: int):
    """The tight box (inches, figure coordinates) padded by ``savefig.pad_inches`` and moved to the
    nearest whole pixel at ``dpi``, its size in pixels truncated as savefig truncates it (so the PNG
    has savefig's size and its content moves by less than half a pixel, inside the padding); with
    the rows (counted from the top of a canvas ``height`` pixels high, as its buffer holds them) and
    the columns it covers, ``(r0, r1, c0, c1)``, which may reach beyond the canvas."""
    import matplotlib as mpl
    from matplotlib.transforms import Bbox

    pad = mpl.rcParams["savefig.pad_inches"]
    box = tight.padded(pad, pad)
    c0, r1 = round(box.x0 * dpi), round(height - box.y0 * dpi)
    c1, r0 = c0 + int(box.width * dpi), r1 - int(box.height * dpi)
    snapped = Bbox.from_extents(c0 / dpi, (height - r1) / dpi, c1 / dpi, (height - r0) / dpi)
    return snapped, (r0, r1, c0, c1)


class _no_placeholder_layout:
    """While saving, no layout engine on a figure that ``fig.tight_layout()`` left with matplotlib's
    place-holder engine (a layout done once, none to redo): with any engine set, ``savefig`` first
    draws the whole figure without rendering (text extents, ticks, mathtext) only to run the engine,
    which the place-holder does not do, so that draw changes nothing written and costs as much as
    the real one. The engine is put back afterwards (the figure is left as it was). A real engine
    (tight or constrained, ``figure.autolayout``) is kept and runs as before."""

    def __init__(self, fig):
        self.fig, self.saved = fig, None

    def __enter__(self):
        import matplotlib as mpl
        from matplotlib.layout_engine import PlaceHolderLayoutEngine

        engine = self.fig.get_layout_engine()
        if (isinstance(engine, PlaceHolderLayoutEngine) and not mpl.rcParams["figure.autolayout"]
                and not mpl.rcParams["figure.constrained_layout.use"]):
            self.saved = engine
            self.fig.set_layout_engine(None)  # None, given neither rcParam asks for an engine
        return self

    def __exit__(self, *exc) -> None:
        if self.saved is not None:
            self.fig.set_layout_engine(self.saved)


def markdown_table(df: pd.DataFrame, caption: str, float_format: str = "{:.6g}") -> str:
    """A GitHub-flavoured Markdown table preceded by its caption (no extra dependency)."""
    cols = [str(c) for c in df.columns]
    lines = [caption, "", "| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, float_format) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v: object, float_format: str) -> str:
    pd = sys.modules.get("pandas")  # pd.NA exists only where pandas was imported
    if v is None or (isinstance(v, float) and math.isnan(v)) or (pd is not None and v is pd.NA):
        return ""
    if isinstance(v, float):
        return float_format.format(v)
    return str(v).replace("|", "\\|")


def _default(o: object) -> object:
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
