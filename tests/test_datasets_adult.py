import pyarrow.parquet as pq
import pytest

from shuffledp.datasets import adult
from shuffledp.datasets.prepare import prepare_adult
from shuffledp.datasets.provenance import read_provenance

DATA = (
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, "
    "United-States, <=50K\n"
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, "
    "13, United-States, <=50K\n\n"
)
TEST = (
    "|1x3 Cross validator\n"
    "25, ?, 226802, 11th, 7, Never-married, ?, Own-child, Black, Male, 0, 0, 40, ?, >50K.\n"
)


def test_parse_and_encode_quirks(tmp_path):
    (tmp_path / "adult.data").write_text(DATA)
    (tmp_path / "adult.test").write_text(TEST)
    raw = adult.read_raw(tmp_path / "adult.data", tmp_path / "adult.test")
    assert len(raw) == 3 and raw["income"].tolist() == ["<=50K", "<=50K", ">50K"]
    codes, domains = adult.encode(raw)
    assert codes["workclass"].tolist()[2] == domains["workclass"] - 1  # '?' is the last category
    assert codes["age"].tolist() == [39 - 17, 50 - 17, 25 - 17]
    assert all((codes[c] >= 0).all() and (codes[c] < domains[c]).all() for c in codes)


def test_unknown_category_is_an_error(tmp_path):
    (tmp_path / "adult.data").write_text(DATA.replace("State-gov", "Moon-gov"))
    (tmp_path / "adult.test").write_text(TEST)
    with pytest.raises(ValueError, match="workclass"):
        adult.encode(adult.read_raw(tmp_path / "adult.data", tmp_path / "adult.test"))


def test_real_adult_through_the_mirror(mirror, tmp_path):
    out = tmp_path / "adult.parquet"
    prov = prepare_adult("real", str(tmp_path / "raw"), str(out), str(mirror), seed=0, log=lambda m: None)
    assert prov["standin"] is False
    table = pq.read_table(out)
    assert table.num_rows == 32_561 + 16_281
    assert read_provenance(out)["domains"]["native_country"] == 42


def test_preprocess_step_refuses_a_bad_public_coding(tmp_path, monkeypatch):
    """The data stage's Adult step checks its public bins when its typed spec is read, before reading
    anything: one usage error naming the coding."""
    monkeypatch.chdir(tmp_path)  # raw_dir: relative, inside the working folder (specs.WorkPath)
    from shuffledp.errors import UsageError
    from shuffledp.stages.data import _preprocess_adult
    from shuffledp.stages.data.specs import PreprocessAdult
    from shuffledp.stages.specs import validate_spec

    spec = {"source": "standin", "raw_dir": "data/raw/adult", "mirror": "", "seed": 0,
            "coding": {"fnlwgt": {"scale": "log", "lo": 0, "hi": 10, "bins": 4}}}
    with pytest.raises(UsageError, match="coding.*lo > 0"):
        validate_spec(PreprocessAdult, spec)
    assert not (tmp_path / "a.parquet").exists()
    spec["coding"] = {"fnlwgt": {"scale": "log", "lo": 1000, "hi": 10**6, "bins": 4}}
    _preprocess_adult(spec, {}, {"table": str(tmp_path / "a.parquet")})
    assert read_provenance(tmp_path / "a.parquet")["domains"]["fnlwgt"] == 4
