"""A figure that cannot be drawn or written is closed all the same: pyplot keeps
every figure until closed, and a report or a session that met bad data would pile
them up."""

import pytest

from pagezero.figures.common import closes_on_error, pyplot, save


def test_a_builder_that_fails_closes_what_it_opened_and_nothing_else():
    plt = pyplot()
    plt.close("all")
    kept = plt.figure()

    @closes_on_error
    def build():
        plt.subplots()
        plt.figure()
        raise ValueError("bad data")

    with pytest.raises(ValueError, match="bad data"):
        build()
    assert plt.get_fignums() == [kept.number]
    plt.close(kept)


def test_a_builder_that_succeeds_returns_its_figure_open():
    plt = pyplot()
    plt.close("all")
    fig = closes_on_error(lambda: plt.figure())()
    assert plt.get_fignums() == [fig.number]


def test_save_closes_a_figure_it_could_not_write(tmp_path, monkeypatch):
    plt = pyplot()
    plt.close("all")
    fig = plt.figure()

    def refuse(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(fig, "savefig", refuse)
    with pytest.raises(OSError, match="disk full"):
        save(fig, str(tmp_path / "f"))
    assert plt.get_fignums() == []
