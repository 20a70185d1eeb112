"""The README's Python example runs as written (in an empty folder)."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "no Python example in the README"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "True [ True False  True]" in out
    assert (tmp_path / "events.bloom.parquet").exists()


TOP_README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def test_top_readme_tour_python_lines_answer_as_written(monkeypatch):
    """The Python lines of the top README's tour, run from the repository's root (they only
    read testdata/): each `EXPRESSION  # ANSWER` line evaluates to what its comment says."""
    text = TOP_README.read_text()
    tour = text[text.index("<!-- tour:begin -->"):text.index("<!-- tour:end -->")]
    blocks = re.findall(r"```python\n(.*?)```", tour, re.S)
    assert blocks, "no Python block in the README's tour"
    monkeypatch.chdir(TOP_README.parent)
    namespace = {"__name__": "__readme__"}
    checked = 0
    for block in blocks:
        for line in block.splitlines():
            code, _, answer = line.partition("  # ")
            if not code.strip():
                continue
            if not answer:
                exec(compile(code, str(TOP_README), "exec"), namespace)
                continue
            got = eval(compile(code, str(TOP_README), "eval"), namespace)
            assert repr(got) == answer.strip(), f"{code.strip()}: {got!r}, the README says {answer}"
            checked += 1
    assert checked >= 3, "the tour's Python lines state no answers"
