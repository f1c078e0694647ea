"""shuffledp.plotting._mpl's shared text caches change no byte of a figure: the same figures (log
axes with mathtext tick labels, titles, a legend, tight_layout; a constrained layout saved with
bbox_inches="tight"; a colorbar) written as PDF and PNG by matplotlib alone and with the shared
caches are identical files, and the caches are shared: drawing the same figures again measures and
parses nothing new."""

from __future__ import annotations

import json
import subprocess
import sys

DRAW = r'''
import hashlib, json, sys
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from shuffledp.io import save_figure_file

def figures(out):
    files = []
    for k in range(1):
        fig, axes = plt.subplots(2, 2, figsize=(7, 5))
        for i, ax in enumerate(axes.ravel()):
            m = np.geomspace(0.1, 10, 12)
            ax.plot(m, 1e-3 * m ** (i - 1.5), marker="o", label=f"series {i}, $\\lambda_{i}$")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"panel {i}, n = {10 ** (i + 3):,}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        axes[0, 0].legend(fontsize=7)
        fig.suptitle("log-log panels")
        fig.tight_layout()
        for ext, kw in (("pdf", {}), ("png", {"dpi": 130})):
            files.append(f"{out}/a{k}.{ext}")
            save_figure_file(fig, files[-1], **kw)
        plt.close(fig)
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), layout="constrained")
        rng = np.random.default_rng(k)
        sc = axes[0].scatter(rng.random(200), rng.random(200), c=rng.random(200), s=4)
        fig.colorbar(sc, ax=axes[0], label="log10 group size")
        axes[1].step(np.sort(rng.random(30)), np.arange(30) / 30, where="post", label="ECDF")
        axes[1].set_xlabel("(eps' - eps1) / eps2")
        axes[1].legend(fontsize=6)
        for ext in ("pdf", "png"):
            files.append(f"{out}/b{k}.{ext}")
            save_figure_file(fig, files[-1], dpi=120, bbox_inches="tight")
        plt.close(fig)
    return {f.rsplit("/", 1)[1]: hashlib.sha256(open(f, "rb").read()).hexdigest() for f in files}

shared = sys.argv[2] == "shared"
if shared:
    from shuffledp.plotting import _mpl
    assert _mpl.share_text_caches()
hashes = figures(sys.argv[1])
sizes = []
if shared:
    sizes.append([len(_mpl._metrics_store), len(_mpl._parse_store)])
    figures(sys.argv[1])  # the same figures again: every measurement and parse is a hit
    sizes.append([len(_mpl._metrics_store), len(_mpl._parse_store)])
print(json.dumps({"hashes": hashes, "sizes": sizes}))
'''


def _draw(tmp_path, mode: str) -> dict:
    out = tmp_path / mode
    out.mkdir()
    proc = subprocess.run([sys.executable, "-c", DRAW, str(out), mode], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_shared_text_caches_change_no_byte_and_are_shared(tmp_path):
    plain, shared = _draw(tmp_path, "plain"), _draw(tmp_path, "shared")
    assert len(plain["hashes"]) == 4
    assert shared["hashes"] == plain["hashes"]
    (metrics, parses), again = shared["sizes"]
    assert metrics > 20 and parses > 5  # tick labels, titles, legends; the log axes' mathtext labels
    assert again == [metrics, parses]


def test_share_text_caches_installs_once():
    from matplotlib import mathtext, text

    from shuffledp.plotting import _mpl

    assert _mpl.share_text_caches()
    first = (text._get_text_metrics_with_cache, mathtext.MathTextParser._parse_cached)
    assert _mpl.share_text_caches()
    assert (text._get_text_metrics_with_cache, mathtext.MathTextParser._parse_cached) == first
    assert first[0].__module__ == _mpl.__name__ and first[1].__module__ == _mpl.__name__
