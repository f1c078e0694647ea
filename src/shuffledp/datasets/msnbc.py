"""MSNBC.com Anonymous Web Data (UCI id 133): download, verify, parse, stand-in.

File format (the quirks the parser handles): ASCII with CRLF line ends, a 7-line header whose
third line lists the 17 category names, then one line per user of space-separated category ids
1..17 in visit order, each line ending in a space; the last line may lack its line end.
Processed tables use 0-based category indices (UCI id - 1).
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from shuffledp.datasets.download import Candidate, Checksum, fetch_verified, mirror_candidate

N_CATEGORIES = 17
HEADER_LINES = 7
RAW_RELPATH = "msnbc/msnbc990928.seq.gz"
SHA256_UNCOMPRESSED = "982d85eb7aff1744e64d8bfadb21f53fb921b79d53b6305d4df232da59f218fe"
CHECKSUM = Checksum("sha256", SHA256_UNCOMPRESSED, gunzip=True)
UCI_ZIP = "https://archive.ics.uci.edu/static/public/133/msnbc+com+anonymous+web+data.zip"
UCI_LEGACY = "https://archive.ics.uci.edu/ml/machine-learning-databases/msnbc-mld/msnbc990928.seq.gz"
CATEGORY_NAMES = (
    "frontpage news tech local opinion on-air misc weather msn-news health living business "
    "msn-sports sports summary bbs travel"
).split()


def candidates(mirror: str | None) -> list[Candidate]:
    return [
        *mirror_candidate(mirror, RAW_RELPATH),
        Candidate(UCI_ZIP, member="msnbc990928.seq.gz"),
        Candidate(UCI_LEGACY),
    ]


def download(dest: str | os.PathLike, mirror: str | None, log: Callable[[str], None] = print) -> str:
    return fetch_verified(dest, candidates(mirror), CHECKSUM, log=log)


@dataclass
class Sequences:
    """Ragged per-user sequences: ``values[offsets[i]:offsets[i+1]]`` is user i (0-based ids)."""

    offsets: np.ndarray  # int64, length n_users + 1
    values: np.ndarray  # int8, 0-based category indices
    category_names: list[str]

    @property
    def n_users(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def parse_seq(raw: bytes) -> Sequences:
    """Parse the uncompressed ``.seq`` file content (vectorised: no per-line Python loop)."""
    text = raw.replace(b"\r\n", b"\n")
    lines = text.split(b"\n", HEADER_LINES)
    if len(lines) <= HEADER_LINES:
        raise ValueError("MSNBC file too short: fewer than 7 header lines")
    names = lines[2].decode("ascii").split()
    if len(names) != N_CATEGORIES:
        raise ValueError(f"MSNBC header line 3 lists {len(names)} categories, expected {N_CATEGORIES}")
    body = lines[HEADER_LINES]
    if body and not body.endswith(b"\n"):
        body += b"\n"
    # Each user line ends in "\n"; mark line ends with a sentinel 0 token (ids are 1..17).
    tokens = np.array(body.replace(b"\n", b" 0 ").split(), dtype=np.int16)
    ends = np.flatnonzero(tokens == 0)
    if tokens.size and (tokens.min() < 0 or tokens.max() > N_CATEGORIES):
        raise ValueError(f"MSNBC category id outside 1..{N_CATEGORIES}")
    values = tokens[tokens != 0].astype(np.int8) - 1
    # line k spans tokens (ends[k-1]+1 .. ends[k]); its item count is the gap minus the sentinel
    counts = np.diff(np.concatenate(([-1], ends))) - 1
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Sequences(offsets=offsets, values=values, category_names=names)


def read_gz(path: str | os.PathLike) -> Sequences:
    with gzip.open(path, "rb") as fh:
        return parse_seq(fh.read())


def sequences_table(seqs: Sequences) -> pa.Table:
    n = seqs.n_users
    seq = pa.ListArray.from_arrays(pa.array(seqs.offsets.astype(np.int32)), pa.array(seqs.values))
    return pa.table(
        {
            "user_id": pa.array(np.arange(n, dtype=np.int32)),
            "seq": seq,
            "n_views": pa.array(seqs.lengths().astype(np.int32)),
        }
    )


DENSE_MAX = 1 << 27  # user x item cells of distinct_sets' presence table (bytes): 128 MB at most


def distinct_sets(offsets: np.ndarray, values: np.ndarray, domain: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct items per user: returns (offsets, values) of the ragged sets."""
    n = len(offsets) - 1
    users = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    codes = users * domain + values.astype(np.int64)
    if len(values) and n * domain <= DENSE_MAX and 0 <= values.min() and values.max() < domain:
        # the sorted distinct codes, as np.unique gives them, from a user x item presence table
        # (numpy's hash-based unique took 1.3 of MSNBC's 2.5 CPU s; this about 0.05 s)
        seen = np.zeros(n * domain, dtype=bool)
        seen[codes] = True
        keys = np.flatnonzero(seen).astype(np.int64)
    else:
        keys = np.unique(codes)
    set_users = keys // domain
    items = (keys % domain).astype(values.dtype)
    sizes = np.bincount(set_users, minlength=n)
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64), items


def sets_table(seqs: Sequences) -> pa.Table:
    offsets, items = distinct_sets(seqs.offsets, seqs.values, N_CATEGORIES)
    return pa.table(
        {
            "user_id": pa.array(np.arange(seqs.n_users, dtype=np.int32)),
            "items": pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(items)),
            "set_size": pa.array(np.diff(offsets).astype(np.int8)),
        }
    )


def categories_table(names: list[str]) -> pa.Table:
    k = len(names)
    return pa.table(
        {
            "index": pa.array(np.arange(k, dtype=np.int8)),
            "category_id": pa.array(np.arange(1, k + 1, dtype=np.int8)),
            "name": pa.array(names, type=pa.string()),
        }
    )


def standin(n_users: int, rng: np.random.Generator) -> Sequences:
    """A clearly artificial stand-in with MSNBC's shape (17 categories, short skewed sequences).

    Category popularity is Zipf-like in a random order, session lengths are geometric with mean
    about 4.7 (MSNBC's mean views per user), and each user revisits a personal subset of 1 to 4
    favourite categories. It is not the real data and every product built from it says so.
    """
    popularity = 1.0 / np.arange(1, N_CATEGORIES + 1) ** 1.1
    popularity = popularity[rng.permutation(N_CATEGORIES)]
    popularity /= popularity.sum()
    lengths = rng.geometric(1 / 4.7, size=n_users)
    n_fav = rng.integers(1, 5, size=n_users)
    total = int(lengths.sum())
    owner = np.repeat(np.arange(n_users), lengths)
    # favourites: n_fav draws per user from popularity; each view picks one favourite uniformly
    fav = rng.choice(N_CATEGORIES, size=(n_users, 4), p=popularity)
    pick = (rng.random(total) * n_fav[owner]).astype(np.int64)
    values = fav[owner, pick].astype(np.int8)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return Sequences(offsets=offsets, values=values, category_names=list(CATEGORY_NAMES))


def sample_text(seqs: Sequences, n: int | None = None) -> bytes:
    """Render sequences back in the publisher's format (used to build parser fixtures)."""
    out = io.BytesIO()
    out.write(b"% Different categories found in input file:\r\n\r\n")
    out.write(" ".join(seqs.category_names).encode() + b" \r\n\r\n\r\n% Sequences:\r\n\r\n")
    n = seqs.n_users if n is None else n
    for i in range(n):
        row = seqs.values[seqs.offsets[i] : seqs.offsets[i + 1]] + 1
        out.write(" ".join(map(str, row.tolist())).encode() + b" \r\n")
    return out.getvalue()
