"""Hostile XML (issue 23): every XML the studio reads (MSCCL files in check-xml and the export checker, GraphML
uploads) goes through defusedxml with DTDs forbidden, so entity expansion (billion laughs), external entities
(XXE) and external DTDs are refused with one line, before anything is expanded or fetched."""
import pytest

from solvers.export import XmlError, check_xml, parse_xml
from studio.cli import main
from topologies import TopologyError
from topologies.files import from_graphml, to_graphml
from topologies import load

LAUGHS = ('<!DOCTYPE lolz [<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)) + "]>")
ATTACKS = {
    "billion laughs": LAUGHS + "<{root}>&lol9;</{root}>",
    "external entity": '<!DOCTYPE {root} [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><{root}>&xxe;</{root}>',
    "external DTD": '<!DOCTYPE {root} SYSTEM "http://example.invalid/evil.dtd"><{root}/>',
    "parameter entity": '<!DOCTYPE {root} [<!ENTITY % p SYSTEM "http://example.invalid/p"> %p;]><{root}/>',
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_msccl_readers_refuse_dtds(attack, capsys, tmp_path):
    text = ATTACKS[attack].format(root="algo")
    with pytest.raises(XmlError, match="DOCTYPE and ENTITY declarations are not allowed") as err:
        parse_xml(text)
    assert "\n" not in str(err.value)
    report = check_xml(text)
    assert not report.ok and "DOCTYPE" in report.first
    path = tmp_path / "evil.xml"
    path.write_text(text)
    assert main(["check-xml", str(path)]) != 0
    out = capsys.readouterr()
    assert "DOCTYPE" in out.out + out.err and "Traceback" not in out.err and "root:" not in out.out + out.err


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_graphml_upload_refuses_dtds(attack):
    with pytest.raises(TopologyError, match="DOCTYPE") as err:
        from_graphml(ATTACKS[attack].format(root="graphml"))
    assert "\n" not in str(err.value)


def test_plain_files_still_read():
    topo = from_graphml(to_graphml(load("biring(6)")))
    assert topo.n == 6
    with pytest.raises(TopologyError, match="not valid GraphML"):
        from_graphml("<graphml><node")
    with pytest.raises(XmlError, match="not well-formed"):
        parse_xml("<algo><gpu></algo>")
