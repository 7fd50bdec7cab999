"""bench/pages.py: the table it prints, from made-up timings (no browser, no server, no timing asserted)."""
from bench.pages import PAGES, Row, Timing, machine_line, median, table


def test_the_table_shows_times_time_outs_errors_and_the_verdict():
    rows = [Row("home", cold=Timing(3.0, 9.5), warm=[Timing(1.2, 3.0), Timing(1.0, 2.0), Timing(5.0, None)]),
            Row("compose", cold=Timing(2.5, None), warm=[Timing(1.5, 4.0)], edit=[Timing(settled=2.5)],
                edit_what="another design"),
            Row("finder", cold=Timing(error="net::ERR_CONNECTION_REFUSED"), warm=[Timing(None, None)])]
    lines = table(rows, timeout_s=60).splitlines()
    assert lines[0].startswith("| page | cold first content | cold settled | warm first content | warm settled |")
    assert len(lines) == 2 + len(rows)
    home, compose, finder = (line.split(" | ") for line in lines[2:])
    assert home[1:6] == ["3.00", "9.50", "1.20", "3.00", "-"]
    assert home[6].endswith("yes |")
    assert compose[2] == "> 60 s" and compose[5] == "2.50 (another design)"
    assert "edit > 2 s" in compose[6]
    assert finder[1:3] == ["error", "error"] and finder[3] == "> 60 s"
    assert "first content > 2 s" in finder[6]


def test_median_counts_a_time_out_as_the_longest():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([1.0, 3.0]) == 2.0
    assert median([1.0, None, None]) is None
    assert median([1.0, 2.0, None]) == 2.0
    assert median([]) is None


def test_every_page_of_the_menu_and_the_machine_line():
    assert PAGES[0] == "home" and len(PAGES) == len(set(PAGES)) == 10
    line = machine_line((0.1, 0.2, 0.3), (1.0, 1.5, 2.0))
    assert "load average" in line and "0.10, 0.20, 0.30" in line and "nothing else running" in line
    assert "other work was running" in machine_line((3.0, 2.0, 1.0))


def test_the_bench_opens_the_pages_the_menu_lists():
    from studio import navigation

    assert PAGES == [spec[3] for spec in navigation._PAGES]


def test_the_split_of_a_warm_opening():
    from bench.pages import split_table

    rows = [Row("home", warm=[Timing(1.0, 4.0, started=0.8, finished=1.5)]), Row("learn", warm=[Timing(None)])]
    lines = split_table(rows).splitlines()
    assert lines[2] == "| home | 0.80 | 0.70 | 2.50 |"
    assert lines[3] == "| learn | - | - | - |"
