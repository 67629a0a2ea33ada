"""abft.campaign and abft.plot_campaign: small CPU campaigns whose summary must agree with
their trial records, reproducibility, the argument checks, Ctrl-C, pandas and matplotlib
(those parts skip where the package is absent)."""

import collections
import io
import os
import signal
import subprocess
import sys
import threading

import pytest

import abft
from abft import _campaign

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SMALL = dict(op="gemm", precision="d", trials=50, controls=20, size=24, backend="cpu",
             seed=20260, refresh=25)
FAILING = ("sdc", "miscorrected", "false_positive", "error")


def _strip(rows, drop=("seconds",)):
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


@pytest.fixture(scope="module")
def small():
    return abft.campaign(**SMALL)


def _check_against_records(res, faulty, controls):
    """The summary's counts are those of the records; the verdict follows from them."""
    s = res.summary
    rows = res.to_dicts()
    assert len(rows) == len(res) == s.total == faulty + controls
    assert [r["trial"] for r in rows] == list(range(s.total))
    assert [r["control"] for r in rows] == [False] * faulty + [True] * controls
    assert not s.partial
    # outcomes: every trial counted once (control errors apart)
    counts = collections.Counter(r["outcome"] for r in rows
                                 if not (r["control"] and r["outcome"] == "error"))
    assert s.counts == {o: counts.get(o, 0) for o in _campaign.OUTCOMES}
    assert s.control_errors == sum(r["control"] and r["outcome"] == "error" for r in rows)
    assert sum(s.counts.values()) + s.control_errors == s.total
    assert s.faulty_trials == faulty and s.control_trials == controls
    for r in rows:
        if r["control"]:
            assert r["outcome"] in ("clean", "false_positive", "error")
            assert r["site"] is None and r["nflips"] == 0 and r["row"] is None
        else:
            assert r["outcome"] not in ("clean", "false_positive")
            assert r["site"] in res.config["sites"]
    # by site and by first flipped bit
    by_site = collections.defaultdict(collections.Counter)
    by_bit = collections.defaultdict(collections.Counter)
    for r in rows:
        if not r["control"]:
            by_site[r["site"]][r["outcome"]] += 1
            if r["nflips"]:
                by_bit[r["bit"]][r["outcome"]] += 1
    assert s.by_site == {st: {o: c.get(o, 0) for o in _campaign.OUTCOMES}
                         for st, c in by_site.items()}
    assert s.by_bit == {b: {o: c.get(o, 0) for o in _campaign.OUTCOMES}
                        for b, c in by_bit.items()}
    clean = [r["report_max_ratio"] for r in rows if r["outcome"] == "clean"]
    assert s.max_control_ratio == (max(clean) if clean else 0.0)
    # the verdict: no SDC, no miscorrection, no false positive (controls and golden runs),
    # no error status
    fails = (s.counts["sdc"] + s.counts["miscorrected"] + s.counts["false_positive"]
             + s.golden_detections + s.counts["error"] + s.control_errors)
    assert s.failures == fails
    assert s.false_positives == s.counts["false_positive"] + s.golden_detections
    assert s.passed == (fails == 0) == res.passed
    assert s.verdict == ("PASS" if fails == 0 else "FAIL") == res.verdict
    assert s["sdc"] == s.counts["sdc"] and s[abft.Outcome.CORRECTED] == s.counts["corrected"]
    rates = s.rates()
    for o, x in rates.items():
        assert x["of"] == (controls if o in ("clean", "false_positive") else faulty)
        lo, hi = x["ci95"]
        assert 0 <= lo <= x["rate"] <= hi <= 1
    return rows


def test_small_gemm_campaign(small):
    rows = _check_against_records(small, 50, 20)
    s = small.summary
    assert s.backend == abft.Backend.CPU and s.golden_runs == 2  # 50 trials, refresh 25
    assert 0 < s.unit_roundoff < 1e-15 and s.seconds > 0
    # a faulty trial's first flip and report are there
    f = next(r for r in rows if not r["control"] and r["nflips"])
    assert 0 <= f["bit"] < 64 and f["width"] == 1 and f["status"] == "ABFT_STATUS_SUCCESS"
    assert f["old_bits"] != f["new_bits"]
    assert abft.flip_bits(f["old_value"], f["bit"]) == f["new_value"] or (
        f["new_value"] != f["new_value"])  # (NaN)
    # this configuration and seed pass (the outcomes are reproducible, see below)
    assert s.passed and s.verdict == "PASS"
    assert s.counts["corrected"] > 0
    text = str(small)
    assert "PASS" in text and "corrected" in text and "gemm fp64" in text
    d = s.as_dict()
    assert d["verdict"] == "PASS" and d["counts"] == s.counts and d["backend"] == "cpu"
    records, summary = small
    assert summary is s


def test_reproducible_with_the_same_seed(small):
    again = abft.campaign(**SMALL)
    assert _strip(again.to_dicts()) == _strip(small.to_dicts())
    assert again.summary.counts == small.summary.counts
    assert again.summary.by_bit == small.summary.by_bit
    other = abft.campaign(**dict(SMALL, seed=SMALL["seed"] + 1))
    assert [r["seed"] for r in other.to_dicts()] != [r["seed"] for r in small.to_dicts()]


def test_jobs_and_replay_give_the_same_trials(small):
    two = abft.campaign(**dict(SMALL, jobs=2))
    assert _strip(two.to_dicts()) == _strip(small.to_dicts())
    rows = small.to_dicts()
    for t in (3, 49, 60):
        one = abft.campaign(**dict(SMALL, replay=t))
        assert len(one) == 1 and one.summary.total == 1
        assert _strip(one.to_dicts())[0] == _strip([rows[t]])[0]


def test_matches_the_c_tool(small, tmp_path):
    """The same options through `abft campaign` (when the C tool is built) give the same
    outcomes, trial by trial."""
    import csv
    tools = [os.environ.get("ABFT_TOOL")] + [os.path.join(ROOT, b, "tools", "abft")
                                             for b in ("build", "build-cpu")]
    tools = [t for t in tools if t and os.path.exists(t)]  # ABFT_TOOL, the quick start's
    if not tools:
        pytest.skip("the abft tool is not built here (ABFT_TOOL names one)")
    why = []
    for tool in tools:  # the first that runs (a stale build may not)
        out = subprocess.run([tool, "campaign", "--backend", "cpu", "--trials", "50",
                              "--controls", "20", "--size", "24", "--seed", str(SMALL["seed"]),
                              "--refresh", "25", "--quiet", "--out", str(tmp_path)],
                             capture_output=True, text=True, timeout=300)
        if out.returncode in (0, 1):
            break
        why.append("%s: status %d %s" % (tool, out.returncode, out.stderr[-200:]))
    else:
        pytest.skip("no abft tool here ran: %s" % "; ".join(why))
    with open(tmp_path / "campaign_gemm_d.csv") as f:
        rows = list(csv.DictReader(f))
    mine = small.to_dicts()
    assert len(rows) == len(mine)
    for a, b in zip(rows, mine):
        assert (int(a["trial"]), int(a["seed"]), a["outcome"]) == (b["trial"], b["seed"],
                                                                  b["outcome"])


def test_full_space():
    res = abft.campaign(trials=40, controls=10, size=12, backend="cpu", seed=7,
                        space="full")
    rows = _check_against_records(res, 40, 10)
    for c, _ in _campaign.FULL_COLUMNS:
        assert c in res.columns
    by_model = collections.defaultdict(collections.Counter)
    for r in rows:
        if not r["control"]:
            assert 1 <= r["m"] <= 12 and 1 <= r["n"] <= 12 and 1 <= r["k"] <= 12
            assert r["transa"] in ("N", "T") and r["checksum"] in ("row", "full")
            by_model[r["model"]][r["outcome"]] += 1
        else:
            assert r["model"] is None
    assert res.summary.by_model == {m: {o: c.get(o, 0) for o in _campaign.OUTCOMES}
                                    for m, c in by_model.items()}


@pytest.mark.parametrize("op", ["getrf", "getrf-online"])
def test_lu_campaign(op):
    res = abft.campaign(op=op, trials=20, controls=5, n=16, backend="cpu", seed=3,
                        lu_recovery=True, precision="float32")
    _check_against_records(res, 20, 5)
    assert res.config["m"] == res.config["k"] == 16 and res.config["precision"] == "s"
    allowed = {"checksum", "after_lu"} | ({"lu_panel"} if op == "getrf-online" else set())
    assert set(res.summary.by_site) <= allowed


def test_sites_and_fault_fields():
    res = abft.campaign(trials=30, controls=0, size=16, backend="cpu", seed=11,
                        sites="after,checksum", bit_class="exponent", width=2, nelems=2)
    rows = res.to_dicts()
    assert {r["site"] for r in rows} <= {"after_gemm", "checksum"}
    assert all(r["nflips"] == 2 and r["width"] == 2 and 52 <= r["bit"] <= 62 for r in rows)
    assert res.config["sites"] == ["after_gemm", "checksum"]
    exact = abft.campaign(trials=10, controls=0, size=16, backend="cpu", bit=61,
                          sites=[abft.Site.AFTER_GEMM])
    assert all(r["bit"] == 61 for r in exact.to_dicts())
    spec = abft.campaign(trials=10, controls=0, size=16, backend="cpu",
                         spec=abft.FaultSpec("sign", row=3, col=4), sites="after_gemm")
    assert all((r["row"], r["col"], r["bit"]) == (3, 4, 63) for r in spec.to_dicts())


def test_default_sites_that_cannot_hold_the_fault_are_left_out():
    # col = 5: the checksums (m x 2) have no column 5; the other sites run
    with pytest.warns(UserWarning, match="checksum"):
        res = abft.campaign(trials=20, controls=0, size=16, backend="cpu", col=5)
    assert "checksum" not in res.config["sites"]
    assert "checksum" not in res.summary.by_site


def test_records_off_and_detail():
    res = abft.campaign(trials=20, controls=5, size=16, backend="cpu", records=False)
    assert len(res) == 0 and res.to_dicts() == [] and res.summary.total == 25
    det = abft.campaign(trials=20, controls=5, size=16, backend="cpu", detail=True)
    for r in det.to_dicts():
        assert len(r["flips"]) == r["nflips"]
        assert isinstance(r["report"], abft.Report)
        assert r["report"].detected == r["detected"]
        if r["nflips"]:
            f = r["flips"][0]
            assert isinstance(f, abft.Flip) and (f.row, f.col, f.bit) == (r["row"], r["col"],
                                                                         r["bit"])
            assert str(f.site) == r["site"]


def test_progress():
    seen = []
    abft.campaign(trials=10, controls=3, size=8, backend="cpu",
                  progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 13) for i in range(1, 14)]


def test_a_callback_error_stops_the_campaign_and_is_raised():
    calls = []

    def progress(done, total):
        calls.append(done)
        if done == 5:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        abft.campaign(trials=2000, controls=0, size=8, backend="cpu", progress=progress)
    assert max(calls) < 2000


BAD = [
    (dict(op="syrk"), "op"),
    (dict(precision="h"), "precision"),
    (dict(trials=-1), "trials"),
    (dict(trials=1.5), "trials"),
    (dict(trials=0, controls=0), "trials"),
    (dict(controls="many"), "controls"),
    (dict(size=0), "size"),
    (dict(m=0), "m"),
    (dict(op="getrf", m=8), "m"),
    (dict(op="getrf", k=8), "k"),
    (dict(op="getrf", checksums="full"), "checksums"),
    (dict(op="getrf", random_checksum=True), "random_checksum"),
    (dict(lu_recovery=True), "lu_recovery"),
    (dict(checksums="diagonal"), "checksums"),
    (dict(bound="loose"), "bound"),
    (dict(bound_factor=0), "bound_factor"),
    (dict(bound_factor=2e6), "bound_factor"),
    (dict(guarantee=0.5), "guarantee"),
    (dict(guarantee=float("inf")), "guarantee"),
    (dict(jobs=0), "jobs"),
    (dict(jobs=65), "jobs"),
    (dict(seed=-1), "seed"),
    (dict(seed=2**64), "seed"),
    (dict(refresh=0), "refresh"),
    (dict(space="half"), "space"),
    (dict(backend="tpu"), "backend"),
    (dict(sites="lu_panel"), "sites"),
    (dict(sites="nowhere"), "sites"),
    (dict(sites="after,"), "sites"),
    (dict(sites=[]), "sites"),
    (dict(bit_class="middle"), "bit_class"),
    (dict(bit=64), "bit"),
    (dict(precision="s", bit=31, width=2), "bit"),
    (dict(bit_class="sign", bit=3), "bit"),
    (dict(width=3), "width"),
    (dict(nelems=0), "nelems"),
    (dict(nelems=65), "nelems"),
    (dict(row=-2), "row"),
    (dict(row=100, sites="after_gemm"), "row"),
    (dict(col=1000), "col"),
    (dict(nelems=20, row=1, sites="checksum"), "nelems"),
    (dict(spec=abft.FaultSpec(width=5)), "spec.width"),
    (dict(spec=abft.FaultSpec(), bit=3), "bit"),
    (dict(spec="exponent"), "spec"),
    (dict(space="full", checksums="full"), "checksums"),
    (dict(space="full", bound="tight"), "bound"),
    (dict(space="full", random_checksum=False), "random_checksum"),
    (dict(space="full", row=3), "row"),
    (dict(space="full", spec=abft.FaultSpec(nelems=2)), "spec"),
    (dict(replay=70), "replay"),
    (dict(size=2**40), "size"),
    (dict(m=2**40), "m"),
    (dict(on_interrupt="ignore"), "on_interrupt"),
    (dict(progress="yes"), "progress"),
]


@pytest.mark.parametrize("kwargs,argument", BAD,
                         ids=["%s-%s" % (a, "-".join(map(str, k))) for k, a in BAD])
def test_invalid_arguments_name_the_argument(kwargs, argument):
    args = dict(trials=50, controls=20, size=16, backend="cpu")
    args.update(kwargs)
    with pytest.raises(abft.InvalidValueError) as ei:
        abft.campaign(**args)
    e = ei.value
    assert isinstance(e, ValueError) and isinstance(e, abft.Error)
    assert e.argument == argument, str(e)
    assert repr(argument) in str(e) and "ABFT_STATUS_INVALID_VALUE" in str(e)
    assert e.status == abft.Status.INVALID_VALUE


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError):
        abft.campaign(trials=1, size=4, bits="exponent")


@pytest.mark.skipif(abft.cuda_built(), reason="this build has the CUDA backend")
def test_cuda_backend_without_cuda():
    with pytest.raises(abft.NotSupportedError) as ei:
        abft.campaign(trials=2, controls=0, size=8, backend="cuda")
    assert ei.value.function == "abft_campaign_run"


# ---- Ctrl-C ----------------------------------------------------------------------------------

def _interrupting(after):
    """A progress callback that sends SIGINT to the process once `after` trials are done,
    then slows every trial down, so that the campaign is still running when the main thread
    sees the interrupt. (With refresh = 1 every block is one trial: the workers of jobs > 1
    run at most 64 blocks ahead of the trials passed on, all of which are passed on.)"""
    import time
    sent = []

    def progress(done, total):
        if done == after and not sent:
            sent.append(done)
            os.kill(os.getpid(), signal.SIGINT)
        if sent:
            time.sleep(0.005)
    return progress


@pytest.fixture
def sigint_default():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _check_partial(res, asked):
    s = res.summary
    assert res.partial and s.partial
    assert 10 <= s.total < asked
    rows = res.to_dicts()
    assert [r["trial"] for r in rows] == list(range(s.total))  # a prefix, in order
    assert sum(s.counts.values()) + s.control_errors == s.total
    counts = collections.Counter(r["outcome"] for r in rows)
    assert {o: counts.get(o, 0) for o in _campaign.OUTCOMES} == s.counts
    assert s.verdict == ("FAIL" if s.failures else "PARTIAL")


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_raises_with_the_partial_result(sigint_default, jobs):
    with pytest.raises(abft.CampaignInterrupted) as ei:
        abft.campaign(trials=3000, controls=0, size=8, backend="cpu", jobs=jobs, refresh=1,
                      progress=_interrupting(10))
    assert isinstance(ei.value, KeyboardInterrupt)
    assert "interrupted after" in str(ei.value)
    _check_partial(ei.value.result, 3000)


def test_ctrl_c_returns_the_partial_result(sigint_default):
    res = abft.campaign(trials=3000, controls=0, size=8, backend="cpu", refresh=1,
                        progress=_interrupting(10), on_interrupt="return")
    _check_partial(res, 3000)
    assert "PARTIAL" in str(res)


# ---- pandas ----------------------------------------------------------------------------------

def test_records_are_a_dataframe_with_pandas(small):
    pd = pytest.importorskip("pandas")
    df = small.records
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(small.columns) and len(df) == 70
    assert str(df["row"].dtype) == "Int64" and df["row"].isna().sum() == 20
    assert str(df["old_bits"].dtype) == "UInt64" and str(df["seed"].dtype) == "uint64"
    assert df["control"].dtype == bool
    counts = df.loc[~df.control, "outcome"].value_counts().to_dict()
    assert counts == {o: c for o, c in small.summary.counts.items()
                      if c and o not in ("clean", "false_positive")}
    rows = small.to_dicts()
    assert [int(x) for x in df["old_bits"].dropna()] == [r["old_bits"] for r in rows
                                                         if r["old_bits"] is not None]


def test_records_without_pandas(small, monkeypatch):
    monkeypatch.setattr(_campaign, "_pandas", lambda: None)
    res = abft.campaign(trials=5, controls=2, size=8, backend="cpu")
    assert isinstance(res.records, list) and isinstance(res.records[0], dict)
    assert res.records[-1]["control"] is True and res.records[-1]["row"] is None
    with pytest.raises(ImportError, match="pandas"):
        res.to_frame()


# ---- matplotlib ------------------------------------------------------------------------------

def test_plot_campaign(small):
    pytest.importorskip("matplotlib")
    fig = abft.plot_campaign(small)
    axes = fig.get_axes()
    assert len(axes) == 2
    assert "PASS" in fig._suptitle.get_text()
    assert [t.get_text() for t in axes[0].get_xticklabels()] == list(
        small.summary.by_site) + ["controls"]
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"
    fig2 = abft.plot_campaign(small.summary, title="only the summary")
    assert fig2._suptitle.get_text() == "only the summary"
    with pytest.raises(abft.InvalidValueError):
        abft.plot_campaign([1, 2, 3])


def test_plot_campaign_without_matplotlib(small, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="needs matplotlib"):
        abft.plot_campaign(small)


# ---- the example -------------------------------------------------------------------------------

def test_campaign_example_runs(tmp_path):
    ex = os.path.join(ROOT, "examples", "python", "campaign.py")
    if not os.path.exists(ex):
        pytest.skip("the example is not here")
    env = dict(os.environ, MPLBACKEND="Agg")
    args = [sys.executable, ex, "--trials", "60", "--controls", "20", "--size", "24",
            "--backend", "cpu"]
    try:
        import matplotlib  # noqa: F401
        args += ["--plot", str(tmp_path / "c.png")]
    except ImportError:
        pass
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "verdict: PASS" in out.stdout and "faulty trials by site" in out.stdout
    if "--plot" in args:
        with open(tmp_path / "c.png", "rb") as f:
            assert f.read(4) == b"\x89PNG"
