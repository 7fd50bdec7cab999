"""Size caps on what users hand in, and download names made safe (issue 23): a demand matrix or a measurements
CSV over its cap is refused in one line (never cut short and read in part), and no download name carries a path
separator, quote, control or non-ASCII character of the expression or upload it comes from."""
import pytest

from solvers.core.errors import NotApplicable
from solvers.genmodel import FitError, read_measurements
from solvers.genmodel.fit import MAX_CSV_CHARS
from solvers.teccl import read_demand_matrix
from solvers.teccl.instance import MAX_DEMAND_TEXT
from studio.cli import main
from studio.widgets import safe_stem


def test_a_demand_matrix_over_its_cap_is_refused_not_cut(tmp_path, capsys):
    row = "0,1,0,0\n"
    big = row * (MAX_DEMAND_TEXT // len(row) + 1)
    assert read_demand_matrix(big[:MAX_DEMAND_TEXT - MAX_DEMAND_TEXT % len(row)])   # at the cap: read whole
    with pytest.raises(NotApplicable, match="larger than 100,000 characters"):
        read_demand_matrix(big)
    path = tmp_path / "demand.csv"
    path.write_text(big)
    assert main(["schedule", "ring(4)", "--algo", "teccl", "--collective", "custom", "--demand", str(path)]) == 2
    err = capsys.readouterr().err
    assert "larger than 100,000 characters" in err and err.count("\n") == 1


def test_a_measurements_csv_over_its_cap_is_refused():
    head = "servers,size,time\n"
    with pytest.raises(FitError, match="larger than 10,000,000 characters"):
        read_measurements(head + "4,1e6,0.001\n" * (MAX_CSV_CHARS // 12 + 1))


@pytest.mark.parametrize("text", ["../../etc/passwd", 'a"\r\nContent-Disposition: x', "torus(4,4)", "C:\\x\\y.json",
                                  "é∞𝔘", "", "...", "x" * 500, "name\x00.json"])
def test_download_names_are_plain_ascii(text):
    stem = safe_stem(text)
    assert stem and len(stem) <= 80 and all(c.isascii() and (c.isalnum() or c == "_") for c in stem)
    assert safe_stem("torus(4,4)") == "torus_4_4_" and safe_stem("..", 60) == "download"


class _Upload:
    def __init__(self, name: str, data: bytes):
        self.name, self._data = name, data

    def getvalue(self) -> bytes:
        return self._data


def test_read_upload_text_caps_before_decoding_and_names_the_file():
    from studio.uploads import UploadError, read_upload_text

    assert read_upload_text(_Upload("d.csv", "0,1\n1,0\n".encode()), 10, "the demand matrix") == "0,1\n1,0\n"
    with pytest.raises(UploadError, match="^the demand matrix is larger than 10 characters$"):
        read_upload_text(_Upload("d.csv", b"0" * 41), 10, "the demand matrix")
    with pytest.raises(UploadError, match="^d.csv is not UTF-8 text$"):
        read_upload_text(_Upload("d.csv", b"\xff\xfe0"), 10, "the demand matrix")
