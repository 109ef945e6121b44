"""perseus.RankClient's Python API: names, the deprecated alias, warnings, new calls (no server)."""
import logging
import warnings

import pytest

import perseus


def _client(**kwargs):
    return perseus.RankClient("http://127.0.0.1:9", "j", rank=0, gpu="simulated:A100", poll_interval_ms=20,
                              restore_on_signal=False, **kwargs)


def test_optimizer_is_a_deprecated_alias():
    with pytest.warns(DeprecationWarning, match="use perseus.RankClient"):
        opt = perseus.Optimizer("http://127.0.0.1:9", "j", rank=0, gpu="simulated:A100", restore_on_signal=False)
    with opt:
        assert isinstance(opt, perseus.RankClient)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _client().close()  # the new name does not warn


def test_new_calls_and_stats():
    with _client(framework_durations=True) as client:
        assert client.framework_durations is True and client.simulated is True
        client.on_step_begin()
        client.on_instruction_begin("forward")
        client.on_instruction_end("forward")
        client.on_step_end()
        client.record_durations(0, [0.01])  # accepted (ignored when late or extra), never blocks
        assert client.sync_wanted_at_next_step() in (True, False)
        assert isinstance(client.take_warnings(), list)
        assert client.warning_count >= 0
        stats = client.stats()
        for key in ("achieved_clock_mhz", "profiling_window", "windows_sent", "warnings"):
            assert key in stats, key
    with _client() as client:
        assert client.framework_durations is False


def test_warning_sink_warns_and_logs(caplog):
    with caplog.at_level(logging.WARNING, logger="perseus"):
        with pytest.warns(perseus.PerseusWarning, match="job 'x' is not registered"):
            perseus._warning_sink("job 'x' is not registered")
    assert [r.getMessage() for r in caplog.records if r.name == "perseus"] == ["job 'x' is not registered"]
    assert issubclass(perseus.PerseusWarning, UserWarning)
