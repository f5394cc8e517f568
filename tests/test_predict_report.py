"""The report's "What a new clearing policy would gain here" section, from
synthetic predictions: the explained share first, Milan's figures for scale,
summary figures that are table cells, and a page that fails without taking
the section (or the report) with it."""

import json
import re
import signal

from test_predict import synthetic_prediction

from pagezero import MappingError
from pagezero.interrupt import Interrupted
from pagezero.studies.report import STUDIES
from pagezero.studies.report import predict as report_predict

CFG = {"runs": 1, "fault_size": 16 << 20, "fault_loops": 1}
FIGURE = re.compile(r"(?<![\w.])\d+\.\d+x?(?![\w.])")


def cells(lines):
    return {c.strip() for line in lines if line.startswith("|") for c in line.split("|")}


def study(tmp_path, monkeypatch, answers, quick=False):
    asked = []

    def fake_predict(page, **kwargs):
        asked.append((page, kwargs))
        answer = answers[page]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    monkeypatch.setattr(report_predict, "predict", fake_predict)
    section = report_predict.study_predict(str(tmp_path), CFG, {}, [], None, False, quick)
    return section, asked


def test_the_study_is_in_the_report(tmp_path, monkeypatch):
    section, _ = study(tmp_path, monkeypatch, {"2MB": synthetic_prediction()}, quick=True)
    assert section.title == "What a new clearing policy would gain here"
    assert ("predict", section.title) in [(n, t) for n, t, _ in STUDIES]


def test_section_explained_first_beside_milan(tmp_path, monkeypatch):
    fits = synthetic_prediction()
    failing = MappingError(12, "not enough 1GB hugepages: 1 needed, 0 available")
    section, asked = study(tmp_path, monkeypatch, {"2MB": fits, "1GB": failing})
    assert [page for page, _ in asked] == ["2MB", "1GB"]
    assert asked[0][1]["runs"] == 1 and asked[1][1]["size"] == 1 << 30
    header = next(line for line in section.body if line.startswith("| page"))
    assert header.split("|")[2].strip() == "explained"
    assert "| 2MB | 83% |" in "\n".join(section.body)
    body = "\n".join(section.body)
    assert "11.82 -> 16.48 GB/s (+39%)" in body and "17.51 -> 43.23 GB/s (+147%)" in body
    assert "mm: folio_zero_user: clear contiguous pages" in body
    assert "1GB: not predicted: MappingError: not enough 1GB hugepages" in body
    assert not section.failed and not section.interrupted
    (line,) = section.summary
    assert line.startswith("The running kernel's clearing explains 83% of a 2MB demand fault")
    assert "AMD Milan measured +39%" in line
    assert all(f in cells(section.body) for f in FIGURE.findall(line)), line
    saved = json.loads((tmp_path / "predict.json").read_text())
    assert [d["page"] for d in saved] == ["2MB"]


def test_quick_scale_predicts_2mb_only_with_fewer_replays(tmp_path, monkeypatch):
    section, asked = study(tmp_path, monkeypatch, {"2MB": synthetic_prediction()}, quick=True)
    assert [page for page, _ in asked] == ["2MB"] and asked[0][1]["replay_loops"] == 5


def test_no_fit_projects_nothing_and_says_why(tmp_path, monkeypatch):
    p = synthetic_prediction(fits=False)
    p.explained = 0.4
    p.verdict = "the replay explains 40% of the fault time, under 60%: the model does not fit"
    section, _ = study(tmp_path, monkeypatch, {"2MB": p}, quick=True)
    body = "\n".join(section.body)
    assert "Projected fault rates" not in body and "does not fit" in body
    assert "under 60%: the model does not fit this machine" in section.summary[0]


def test_a_signal_keeps_the_partial_and_marks_the_section(tmp_path, monkeypatch):
    stop = Interrupted(signal.SIGINT, partial=synthetic_prediction())
    after = AssertionError("1GB measured after a signal")
    section, asked = study(tmp_path, monkeypatch, {"2MB": stop, "1GB": after})
    assert section.interrupted == "SIGINT" and len(asked) == 1
    assert "| 2MB | 83% |" in "\n".join(section.body)
