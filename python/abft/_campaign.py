"""abft.campaign: fault-injection campaigns (abft_campaign_run) from Python, and
abft.plot_campaign, a picture of their outcomes.

The campaign is the library's own (inject/abft_campaign.c, docs/campaign.md): the same
config and seed give the same trials and outcomes as `abft campaign` with the same options.
This module checks the arguments (naming the one at fault), fills abft_campaign_config_t,
runs the campaign on a thread of its own while the calling thread waits (so that Ctrl-C
reaches Python at once: it sets the campaign's stop flag), collects every trial from the
on_trial callback, and turns the summary's arrays into dicts keyed by the library's names.
"""

import ctypes
import math
import numbers
import os
import sys
import threading
import time
import warnings

from . import _lib
from ._enums import (Backend, BitClass, BoundMode, CampaignOp, ChecksumKind, FaultModel,
                     Operation, Outcome, Site, Space, Status)
from ._errors import argument_error, error_for
from ._handle import FaultSpec
from ._report import Flip, Report

_SUCCESS = 0

# ---- names -------------------------------------------------------------------------------

OUTCOMES = tuple(str(Outcome(o)) for o in range(_lib.OUTCOME_COUNT))
_SITE_NAMES = tuple(str(Site(s)) for s in range(_lib.SITE_COUNT))
_MODEL_NAMES = tuple(str(FaultModel(mo)) for mo in range(_lib.FAULT_MODEL_COUNT))
_STATUS_NAMES = {int(s): s.c_name for s in Status}
_OP_NAMES = {CampaignOp.GEMM: "gemm", CampaignOp.GETRF: "getrf",
             CampaignOp.GETRF_ONLINE: "getrf-online"}
# the sites each operation calls (the campaign's ops[] table, the tool's --op table)
_OP_SITES = {
    CampaignOp.GEMM: (Site.AFTER_ENCODE, Site.MID_GEMM, Site.AFTER_GEMM, Site.CHECKSUM),
    CampaignOp.GETRF: (Site.CHECKSUM, Site.AFTER_LU),
    CampaignOp.GETRF_ONLINE: (Site.CHECKSUM, Site.LU_PANEL, Site.AFTER_LU),
}
# the tool's names for the sites and bit classes (abft campaign --sites, --bits)
_SITE_ALIASES = {"encode": Site.AFTER_ENCODE, "mid": Site.MID_GEMM, "after": Site.AFTER_GEMM,
                 "lu-panel": Site.LU_PANEL, "after-lu": Site.AFTER_LU}
_CLASS_ALIASES = {"mant-high": BitClass.MANTISSA_HIGH, "mant-low": BitClass.MANTISSA_LOW}
_BOUND_ALIASES = {"worst": BoundMode.WORST_CASE, "prob": BoundMode.PROBABILISTIC}
_PRECISIONS = {"d": "d", "float64": "d", "fp64": "d", "double": "d", "f8": "d",
               "s": "s", "float32": "s", "fp32": "s", "single": "s", "float": "s", "f4": "s"}

# Outcomes that fail a campaign (docs/campaign.md): SDC, miscorrection, false positive,
# error status.
_MUST_BE_ZERO = ("sdc", "miscorrected", "false_positive", "error")

# ---- the trial records -------------------------------------------------------------------

# (column, kind): i int64, u uint64, f float, b bool, s text; None where a value is missing
# (a control trial has no site and no flip). The CSV's columns of `abft campaign`
# (docs/campaign.md), with report_max_ratio's neighbour `checked` added.
RECORD_COLUMNS = (
    ("trial", "i"), ("control", "b"), ("seed", "u"), ("set", "i"), ("site", "s"),
    ("which", "i"), ("outcome", "s"), ("status", "s"), ("nflips", "i"), ("row", "i"),
    ("col", "i"), ("bit", "i"), ("width", "i"), ("old_value", "f"), ("new_value", "f"),
    ("old_bits", "u"), ("new_bits", "u"), ("rho", "f"), ("report_max_ratio", "f"),
    ("checked", "i"), ("detected", "i"), ("corrected", "i"), ("uncorrectable", "i"),
    ("recomputed", "i"), ("checksum_faults", "i"), ("seconds", "f"), ("rel_change", "f"),
)
# the full space's drawn configuration (abft_trial_t.config; the CSV's extra columns)
FULL_COLUMNS = (
    ("rho_check", "f"), ("m", "i"), ("n", "i"), ("k", "i"), ("transa", "s"),
    ("transb", "s"), ("lda", "i"), ("ldb", "i"), ("ldc", "i"), ("alpha", "f"),
    ("beta", "f"), ("c_scale", "f"), ("checksum", "s"), ("bound", "s"),
    ("bound_factor", "f"), ("math", "s"), ("recompute", "b"), ("lu_recovery", "b"),
    ("nb", "i"), ("check_every", "i"), ("panel_nb", "i"), ("lookahead", "i"),
    ("model", "s"), ("model_width", "i"), ("call", "i"), ("calls", "i"),
    ("random_checksum", "b"),
)
DETAIL_COLUMNS = (("flips", "o"), ("report", "o"))


def _name(table, i, fn):
    try:
        return table[i]
    except (IndexError, KeyError):
        return getattr(_lib, fn)(int(i)).decode()


def _pandas():
    """pandas, or None when it is not installed (the records are then a list of dicts)."""
    try:
        import pandas
    except ImportError:
        return None
    return pandas


class _Collector:
    """The on_trial and progress callbacks: one row (a tuple) per trial."""

    def __init__(self, full, keep, detail, progress, stop):
        self.full, self.keep, self.detail = full, keep, detail
        self.progress = progress
        self.stop = stop
        self.rows = []
        self.error = None
        self.c_on_trial = _lib.ON_TRIAL_FN(self._on_trial)
        self.c_progress = _lib.PROGRESS_FN(self._progress)

    def _fail(self, e):
        if self.error is None:
            self.error = e
        self.stop.value = 1  # no further trial: the error is raised after the run

    def _on_trial(self, user, tp):
        if not self.keep or self.error is not None:
            return
        try:
            self.rows.append(self.row(tp.contents))
        except BaseException as e:  # noqa: BLE001 - raised again after the run
            self._fail(e)

    def _progress(self, user, done, total):
        if self.progress is None or self.error is not None:
            return
        try:
            self.progress(done, total)
        except BaseException as e:  # noqa: BLE001 - raised again after the run
            self._fail(e)

    def row(self, t):
        r = t.report
        control = bool(t.control)
        n = t.nflips
        if n > 0:
            f = t.flips[0]
            flip = (f.row, f.col, f.bit, f.width, f.old_value, f.new_value, f.old_bits,
                    f.new_bits)
        else:
            flip = (None,) * 8
        row = (t.index, control, t.seed, t.set,
               None if control or t.site < 0 else _name(_SITE_NAMES, t.site,
                                                        "abft_hook_site_name"),
               t.which, _name(OUTCOMES, t.outcome, "abft_outcome_name"),
               _name(_STATUS_NAMES, t.status, "abft_status_name"), n) + flip + (
               t.rho, r.max_ratio, r.checked, r.detected, r.corrected, r.uncorrectable,
               r.recomputed, r.checksum_faults, t.seconds, t.rel_change)
        if self.full:
            c = t.config
            row += (t.rho_check, c.m, c.n, c.k, _enum_name(Operation, c.transa),
                    _enum_name(Operation, c.transb), c.lda, c.ldb, c.ldc, c.alpha, c.beta,
                    c.c_scale, _enum_name(ChecksumKind, c.checksum_kind),
                    _enum_name(BoundMode, c.bound_mode), c.bound_factor,
                    "tf32" if c.math_mode else "default", bool(c.recompute),
                    bool(c.lu_recovery), c.nb, c.check_every, c.panel_nb, c.lookahead,
                    None if control or c.model < 0 else _name(_MODEL_NAMES, c.model,
                                                              "abft_fault_model_name"),
                    c.width, c.call, c.calls, bool(c.random_checksum))
        if self.detail:
            row += (tuple(Flip._from_c(t.flips[i]) for i in range(n)), Report._from_c(r))
        return row


def _enum_name(cls, v):
    try:
        return str(cls(v))
    except ValueError:
        return int(v)


# ---- the summary ---------------------------------------------------------------------------

def _outcome_dict(arr):
    return {OUTCOMES[o]: int(arr[o]) for o in range(len(OUTCOMES))}


def wilson_interval(k, n, z=1.96):
    """The Wilson score interval of k events in n trials (abft_wilson_interval): (lo, hi)."""
    lo, hi = ctypes.c_double(), ctypes.c_double()
    _lib.abft_wilson_interval(int(k), int(n), float(z), ctypes.byref(lo), ctypes.byref(hi))
    return lo.value, hi.value


class CampaignSummary:
    """The summary of a campaign (abft_campaign_summary_t) with the library's names.

    counts: {outcome: trials} for every outcome of abft_outcome_name ("masked",
    "corrected", "uncorrectable", "gray", "sdc", "miscorrected", "false_positive", "clean",
    "not_fired", "error", "undetected"), control trials with an error status excluded (they
    are control_errors); by_site: {site: {outcome: faulty trials}} for the sites struck
    ("after_gemm", ...); by_bit: {first flipped bit: {outcome: faulty trials}} for the bits
    flipped; by_model (full space): {fault model: {outcome: faulty trials}}. total (trials
    run), partial (stopped early: the counts are of trials 0 .. total - 1), backend,
    seconds, unit_roundoff, golden_runs, golden_detections, control_errors,
    spread_undetected, max_control_ratio, max_corrected_rho, max_undetected_rho,
    max_undetected_rel: the C fields. Derived as the tool derives them: faulty_trials,
    control_trials (control_errors included), false_positives (controls and golden runs),
    failures (SDC + miscorrected + false positives + error statuses, the controls'
    included), passed (failures == 0), verdict ("PASS", "FAIL", or "PARTIAL" for a stopped
    run without failures). summary["sdc"] is counts["sdc"]; rates() gives each outcome's
    rate with its Wilson 95 % interval."""

    def __init__(self, s, space):
        self.total = int(s.total)
        self.counts = _outcome_dict(s.count)
        self.by_site = {}
        for st in range(_lib.SITE_COUNT):
            if sum(s.by_site[st]):
                self.by_site[_SITE_NAMES[st]] = _outcome_dict(s.by_site[st])
        self.by_bit = {}
        for b in range(64):
            if sum(s.by_bit[b]):
                self.by_bit[b] = _outcome_dict(s.by_bit[b])
        self.by_model = {}
        if space == Space.FULL:
            for mo in range(_lib.FAULT_MODEL_COUNT):
                if sum(s.by_model[mo]):
                    self.by_model[_MODEL_NAMES[mo]] = _outcome_dict(s.by_model[mo])
        self.max_control_ratio = s.max_control_ratio
        self.max_corrected_rho = s.max_corrected_rho
        self.max_undetected_rho = s.max_undetected_rho
        self.max_undetected_rel = s.max_undetected_rel
        self.seconds = s.seconds
        try:
            self.backend = Backend(s.backend)
        except ValueError:
            self.backend = int(s.backend)
        self.partial = bool(s.partial)
        self.unit_roundoff = s.unit_roundoff
        self.golden_runs = int(s.golden_runs)
        self.golden_detections = int(s.golden_detections)
        self.control_errors = int(s.control_errors)
        self.spread_undetected = int(s.spread_undetected)

    def __getitem__(self, outcome):
        return self.counts[str(Outcome.parse(outcome, "outcome"))]

    @property
    def control_trials(self):
        return self.counts["clean"] + self.counts["false_positive"] + self.control_errors

    @property
    def faulty_trials(self):
        return sum(self.counts.values()) - self.counts["clean"] - self.counts["false_positive"]

    @property
    def false_positives(self):
        """False positives in control trials and golden runs (both fault-free runs)."""
        return self.counts["false_positive"] + self.golden_detections

    @property
    def failures(self):
        return (self.counts["sdc"] + self.counts["miscorrected"] + self.false_positives
                + self.counts["error"] + self.control_errors)

    @property
    def passed(self):
        """No SDC, no miscorrection, no false positive, no error status in the trials run."""
        return self.failures == 0

    @property
    def verdict(self):
        if self.failures:
            return "FAIL"
        return "PARTIAL" if self.partial else "PASS"

    def rates(self, z=1.96):
        """{outcome: {"count", "of", "rate", "ci95": (lo, hi)}}: faulty-trial outcomes of
        the faulty trials, "clean" and "false_positive" of the control trials (the JSON
        summary's `outcomes`)."""
        out = {}
        for o in OUTCOMES:
            n = self.control_trials if o in ("clean", "false_positive") else self.faulty_trials
            k = self.counts[o]
            out[o] = {"count": k, "of": n, "rate": k / n if n else 0.0,
                      "ci95": wilson_interval(k, n, z)}
        return out

    def as_dict(self):
        keys = ("total", "partial", "verdict", "passed", "failures", "faulty_trials",
                "control_trials", "false_positives", "counts", "by_site", "by_bit",
                "by_model", "backend", "seconds", "unit_roundoff", "golden_runs",
                "golden_detections", "control_errors", "spread_undetected",
                "max_control_ratio", "max_corrected_rho", "max_undetected_rho",
                "max_undetected_rel")
        d = {k: getattr(self, k) for k in keys}
        d["backend"] = str(d["backend"])
        return d

    def lines(self):
        """The summary as text lines: a row per outcome with its count, rate and interval."""
        r = self.rates()
        out = []
        if self.faulty_trials:
            out.append("%-16s %8s %9s   %s" % ("faulty trials", "count", "rate",
                                               "95% CI (Wilson)"))
            for o in ("masked", "undetected", "corrected", "uncorrectable", "gray", "sdc",
                      "miscorrected", "not_fired", "error"):
                x = r[o]
                if o in ("not_fired", "error") and not x["count"]:
                    continue
                out.append("%-16s %8d %8.2f%%   [%6.2f, %6.2f] %%%s" % (
                    o, x["count"], 100 * x["rate"], 100 * x["ci95"][0], 100 * x["ci95"][1],
                    "  must be 0" if o in _MUST_BE_ZERO else ""))
        nfree = self.control_trials + self.golden_runs
        lo, hi = wilson_interval(self.false_positives, nfree)
        out.append("%-16s %8d %8.2f%%   [%6.2f, %6.2f] %%  must be 0 (%d controls + golden "
                   "runs)" % ("false_positive", self.false_positives,
                              100.0 * self.false_positives / nfree if nfree else 0.0,
                              100 * lo, 100 * hi, nfree))
        if self.control_errors:
            out.append("%-16s %8d   must be 0" % ("control errors", self.control_errors))
        return out

    def __repr__(self):
        return ("CampaignSummary(verdict=%r, total=%d, faulty_trials=%d, control_trials=%d, "
                "counts=%r)" % (self.verdict, self.total, self.faulty_trials,
                                self.control_trials,
                                {k: v for k, v in self.counts.items() if v}))


class CampaignResult:
    """What abft.campaign returns: .records (a pandas DataFrame when pandas is installed,
    else a list of dicts; one row per trial in index order, the faulty trials first),
    .summary (CampaignSummary), .config (the arguments as run). records, summary =
    abft.campaign(...) unpacks it. to_dicts() and to_frame() give the records either way."""

    def __init__(self, config, columns, rows, summary):
        self.config = config
        self.columns = tuple(c for c, _ in columns)
        self._kinds = tuple(k for _, k in columns)
        self._rows = rows
        self.summary = summary
        self._records = None

    @property
    def partial(self):
        return self.summary.partial

    @property
    def passed(self):
        return self.summary.passed

    @property
    def verdict(self):
        return self.summary.verdict

    def __len__(self):
        return len(self._rows)

    def __iter__(self):
        yield self.records
        yield self.summary

    @property
    def records(self):
        if self._records is None:
            self._records = self.to_frame() if _pandas() is not None else self.to_dicts()
        return self._records

    def to_dicts(self):
        """The records as a list of dicts (column: value; None where missing)."""
        cols = self.columns
        return [dict(zip(cols, r)) for r in self._rows]

    def to_frame(self):
        """The records as a pandas DataFrame (ImportError without pandas): integer columns
        with missing values (a control's flip) as pandas' nullable Int64 / UInt64."""
        pd = _pandas()
        if pd is None:
            raise ImportError("abft: CampaignResult.to_frame needs pandas, which is not "
                              "installed (pip install pandas); to_dicts() gives the records "
                              "as a list of dicts")
        import numpy as np
        data = {}
        for j, (name, kind) in enumerate(zip(self.columns, self._kinds)):
            vals = [r[j] for r in self._rows]
            missing = any(v is None for v in vals)
            if kind in ("i", "u"):
                if missing:
                    data[name] = pd.array(vals, dtype="Int64" if kind == "i" else "UInt64")
                else:
                    data[name] = np.array(vals, dtype=np.int64 if kind == "i" else np.uint64)
            elif kind == "f":
                data[name] = np.array([np.nan if v is None else v for v in vals],
                                      dtype=np.float64)
            elif kind == "b":
                data[name] = np.array(vals, dtype=bool)
            else:
                data[name] = pd.Series(vals, dtype=object)
        return pd.DataFrame(data, columns=list(self.columns))

    def __str__(self):
        c = self.config
        if c["op"] == "gemm":
            dims = "m = %d, n = %d, k = %d" % (c["m"], c["n"], c["k"])
        else:
            dims = "n = %d" % c["n"]
        s = self.summary
        head = ("abft campaign: %s %s, %s, space %s, backend %s, seed %d: %d trials "
                "(%d faulty, %d controls) in %.1f s"
                % (c["op"], "fp64" if c["precision"] == "d" else "fp32", dims, c["space"],
                   s.backend, c["seed"], s.total, s.faulty_trials, s.control_trials,
                   s.seconds))
        lines = [head]
        if s.partial:
            lines.append("PARTIAL: stopped after %d of %d trials; every count is of the "
                         "trials run" % (s.total, c["trials"] + c["controls"]))
        lines += s.lines()
        lines.append("verdict: %s (no SDC, no miscorrection, no false positive, no error "
                     "status%s)" % (s.verdict, "" if s.passed else ": violated"))
        return "\n".join(lines)

    def __repr__(self):
        return "<abft.CampaignResult %s\n%s>" % (self.verdict, self)


class CampaignInterrupted(KeyboardInterrupt):
    """Raised by abft.campaign (on_interrupt="raise", the default) when Ctrl-C (a
    KeyboardInterrupt) stopped the campaign: .result holds the trials that finished,
    result.partial is True (docs/python.md, "Campaigns")."""

    def __init__(self, result):
        s = result.summary
        super().__init__("abft campaign interrupted after %d of %d trials (%s); the "
                         "exception's .result holds them"
                         % (s.total, result.config["trials"] + result.config["controls"],
                            "%d failures among them" % s.failures if s.failures
                            else "no failure among them"))
        self.result = result


# ---- argument checks -----------------------------------------------------------------------

def _int(v, name, lo, hi):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise argument_error(name, "%r is not a whole number" % (v,))
    v = int(v)
    if v < lo or v > hi:
        raise argument_error(name, "%d is out of range (accepted: %d to %d)" % (v, lo, hi))
    return v


def _real(v, name, lo, lo_open, hi):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise argument_error(name, "%r is not a finite number" % (v,))
    v = float(v)
    if (v <= lo if lo_open else v < lo) or v > hi:
        raise argument_error(name, "%g is out of range (accepted: %s %g%s)" % (
            v, ">" if lo_open else ">=", lo, "" if hi == math.inf else " and <= %g" % hi))
    return v


def _switch(v, name):
    if isinstance(v, bool) or (isinstance(v, numbers.Integral) and int(v) in (0, 1)):
        return int(v)
    if isinstance(v, str) and v.lower() in ("on", "off"):
        return int(v.lower() == "on")
    raise argument_error(name, "%r is not a switch (accepted: True, False)" % (v,))


def _choice(cls, v, name, aliases=None):
    if isinstance(v, str):
        key = v.strip().lower()
        if aliases and key in aliases:
            return aliases[key]
        v = key.replace("-", "_")
    return cls.parse(v, name)


def _parse_sites(sites, op):
    if sites is None or (isinstance(sites, str) and sites.strip().lower() == "all"):
        return None
    if isinstance(sites, str):
        items = sites.split(",")
    elif isinstance(sites, (Site, numbers.Integral)):
        items = [sites]
    else:
        try:
            items = list(sites)
        except TypeError:
            raise argument_error("sites", "%r is not a site or a list of sites" % (sites,))
    if not items:
        raise argument_error("sites", "is empty (None or 'all': the operation's sites)")
    out = []
    for s in items:
        if isinstance(s, str) and not s.strip():
            raise argument_error("sites", "%r has an empty entry" % (sites,))
        st = _choice(Site, s, "sites", _SITE_ALIASES)
        if st not in _OP_SITES[op]:
            raise argument_error("sites", "names %s, not a site of op %r (its sites: %s)" % (
                st, _OP_NAMES[op], ", ".join(str(x) for x in _OP_SITES[op])))
        if st not in out:
            out.append(st)
    return out


def _site_arrays(op, site, m, n, k, kind):
    """The arrays (rows, cols, name) the injector may be given at `site` in the fixed space
    (the campaign's site_holds, the tool's checks)."""
    if site == Site.AFTER_ENCODE:
        return [(m, k, "A (m x k)"), (k, n, "B (k x n)")]
    if site in (Site.MID_GEMM, Site.AFTER_GEMM):
        return [(m, n, "C (m x n)")]
    if site == Site.CHECKSUM:
        arrs = [(m, 2, "the row checksums (m x 2)")]
        if op == CampaignOp.GEMM and kind == ChecksumKind.FULL:
            arrs.append((n, 2, "the column checksums (n x 2)"))
        return arrs
    return [(n, n, "the n x n matrix")]


def _site_misfit(op, site, m, n, k, kind, spec):
    """None when every array of the site holds the spec's row, column and elements, else
    (argument, reason)."""
    for rows, cols, what in _site_arrays(op, site, m, n, k, kind):
        if spec.row >= rows:
            return "row", "%d is not a row of %s at site %s (rows 0..%d)" % (
                spec.row, what, site, rows - 1)
        if spec.col >= cols:
            return "col", "%d is not a column of %s at site %s (columns 0..%d)" % (
                spec.col, what, site, cols - 1)
        cand = (1 if spec.row >= 0 else rows) * (1 if spec.col >= 0 else cols)
        if cand < spec.nelems:
            return "nelems", "%d elements do not fit in %s at site %s: it has %d candidate%s" % (
                spec.nelems, what, site, cand, "" if cand == 1 else "s")
    return None


def _physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


class _TextProgress:
    """progress=True: a line on stderr, rewritten at most twice a second."""

    def __init__(self):
        self.last = 0.0

    def __call__(self, done, total):
        now = time.monotonic()
        if done == total or now - self.last >= 0.5:
            self.last = now
            sys.stderr.write("\rabft campaign: %d / %d trials" % (done, total))
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()


# ---- the campaign --------------------------------------------------------------------------

def campaign(op="gemm", precision="d", trials=300, controls=300, *, size=None, m=None,
             n=None, k=None, backend="auto", seed=1, space="fixed", sites=None, spec=None,
             bit_class=None, bit=None, width=None, nelems=None, row=None, col=None,
             checksums=None, bound=None, bound_factor=None, random_checksum=None,
             lu_recovery=None, guarantee=2.0, refresh=50, jobs=1, replay=None,
             progress=None, records=True, detail=False, on_interrupt="raise"):
    """Run a fault-injection campaign (abft_campaign_run; docs/campaign.md) and return a
    CampaignResult: .records (pandas DataFrame, else list of dicts), .summary.

    op: "gemm", "getrf" or "getrf-online"; precision: "d" (float64) or "s" (float32);
    trials faulty and controls fault-free trials; size (m = n = k), or m, n, k (getrf: n
    only; default 128); backend "auto", "cpu" or "cuda"; seed (every trial derives from
    it); space "fixed" or "full" (each trial draws its configuration and fault); sites (the
    operation's sites to strike: None/"all", or names such as "after_gemm" or the tool's
    "after", a list or a comma string); the fault: spec (abft.FaultSpec) or its fields
    bit_class ("any", "sign", "exponent", "mantissa_high", "mantissa_low", "exact"), bit
    (an exact bit; alone it means bit_class "exact"), width (1 or 2), nelems, row, col;
    checksums "row" or "full" (gemm), bound "worst_case", "probabilistic" or "tight" and
    bound_factor (None: 4 for probabilistic, else 1), random_checksum (gemm),
    lu_recovery (getrf), guarantee g >= 1, refresh (faulty trials per input set), jobs
    (worker threads, 1 to 64), replay (run trial T alone). The full space draws checksums,
    bound, bound_factor, random_checksum, lu_recovery, width, nelems, row and col: giving
    one is an error.

    progress: None, True (a line on stderr) or fn(done, total); records=False keeps only
    the summary; detail=True adds each trial's flips (Flip) and report (Report).

    Ctrl-C (KeyboardInterrupt) sets the campaign's stop flag: no trial starts after it,
    and the trials finished are summarized (summary.partial True); on_interrupt="raise"
    (default) raises abft.CampaignInterrupted (a KeyboardInterrupt) carrying them in
    .result, "return" returns them. A second Ctrl-C while the trials in progress finish
    raises KeyboardInterrupt at once (the campaign ends on its own thread).

    Invalid arguments raise InvalidValueError naming the argument; a campaign that cannot
    run raises the abft.Error subclass of its status (NotSupportedError for backend
    "cuda" without the CUDA backend or a GPU)."""
    # ---- what to run
    opv = _choice(CampaignOp, op, "op")
    gemm = opv == CampaignOp.GEMM
    if isinstance(precision, str):
        prec = _PRECISIONS.get(precision.strip().lower())
    else:
        prec = _PRECISIONS.get(getattr(precision, "__name__", None) or str(precision))
        if prec is None:
            try:
                import numpy as np
                prec = _PRECISIONS.get(np.dtype(precision).name)
            except (TypeError, ValueError):
                prec = None
    if prec is None:
        raise argument_error("precision", "%r is not a precision (accepted: 'd' or "
                                          "'float64', 's' or 'float32')" % (precision,))
    spv = _choice(Space, space, "space")
    full = spv == Space.FULL
    bk = _choice(Backend, backend, "backend")
    trials = _int(trials, "trials", 0, 10**12)
    controls = _int(controls, "controls", 0, 10**12)
    if trials + controls == 0:
        raise argument_error("trials", "0 with controls = 0 leaves nothing to run")
    seed = _int(seed, "seed", 0, 2**64 - 1)
    refresh = _int(refresh, "refresh", 1, 2**63 - 1)
    jobs = _int(jobs, "jobs", 1, 64)
    guarantee = _real(guarantee, "guarantee", 1.0, False, math.inf)
    only = -1
    if replay is not None:
        only = _int(replay, "replay", 0, trials + controls - 1)

    # ---- sizes
    big = 2**62
    size_arg = "size"
    if size is not None:
        size = _int(size, "size", 1, big)
    if gemm:
        mm = _int(m, "m", 1, big) if m is not None else size
        nn = _int(n, "n", 1, big) if n is not None else size
        kk = _int(k, "k", 1, big) if k is not None else size
        mm, nn, kk = mm or 128, nn or 128, kk or 128
        # (the largest size given by its own argument, else size)
        given_sizes = [(v, name) for name, v in (("m", mm), ("n", nn), ("k", kk))
                       if {"m": m, "n": n, "k": k}[name] is not None]
        size_arg = max(given_sizes)[1] if given_sizes else "size"
    else:
        for name, v in (("m", m), ("k", k)):
            if v is not None:
                raise argument_error(name, "does not apply to op %r: it factors an n x n "
                                           "matrix (give n or size)" % _OP_NAMES[opv])
        nn = _int(n, "n", 1, big) if n is not None else (size or 128)
        mm = kk = nn
        size_arg = "n" if n is not None else "size"

    # ---- options the operation or the space does not take
    if spec is not None and not isinstance(spec, FaultSpec):
        raise argument_error("spec", "expected an abft.FaultSpec, got %r" % (spec,))
    if full:
        drawn = (("checksums", checksums), ("bound", bound), ("bound_factor", bound_factor),
                 ("random_checksum", random_checksum), ("lu_recovery", lu_recovery),
                 ("width", width), ("nelems", nelems), ("row", row), ("col", col))
        for name, v in drawn:
            if v is not None:
                raise argument_error(name, "does not apply to space 'full', which draws it "
                                           "for every trial (docs/campaign.md, \"The full "
                                           "space\")")
        if spec is not None and spec != FaultSpec(bit_class=spec.bit_class, bit=spec.bit):
            raise argument_error("spec", "space 'full' keeps only the bit class and bit "
                                         "of the spec; it draws width, nelems, row and col")
    if not gemm:
        if checksums is not None:
            raise argument_error("checksums", "does not apply to op %r: the LU checks use "
                                              "row checksums only" % _OP_NAMES[opv])
        if random_checksum is not None:
            raise argument_error("random_checksum", "does not apply to op %r (it is for "
                                                    "gemm)" % _OP_NAMES[opv])
    elif lu_recovery is not None:
        raise argument_error("lu_recovery", "does not apply to op 'gemm' (it is for getrf "
                                            "and getrf-online)")
    kind = _choice(ChecksumKind, checksums, "checksums") if checksums is not None \
        else ChecksumKind.ROW
    bmode = _choice(BoundMode, bound, "bound", _BOUND_ALIASES) if bound is not None \
        else BoundMode.WORST_CASE
    if bound_factor is None:
        bfactor = 4.0 if bmode == BoundMode.PROBABILISTIC else 1.0
    else:
        bfactor = _real(bound_factor, "bound_factor", 0.0, True, 1e6)
    rchk = _switch(random_checksum, "random_checksum") if random_checksum is not None else 0
    lurec = _switch(lu_recovery, "lu_recovery") if lu_recovery is not None else 0

    # ---- the fault
    fields = {"bit_class": bit_class, "bit": bit, "width": width, "nelems": nelems,
              "row": row, "col": col}
    given = {f: v for f, v in fields.items() if v is not None}
    if spec is not None:
        if given:
            raise argument_error(next(iter(given)), "give either spec or its fields, not "
                                                    "both")
        sp = spec
        pre = "spec."
    else:
        if bit is not None and bit_class is None:
            given["bit_class"] = BitClass.EXACT
        sp = FaultSpec(**given)
        pre = ""
    cls = _choice(BitClass, sp.bit_class, pre + "bit_class", _CLASS_ALIASES)
    swidth = _int(sp.width, pre + "width", 1, 2)
    snelems = _int(sp.nelems, pre + "nelems", 1, _lib.INJECT_MAX_ELEMS)
    srow = _int(sp.row, pre + "row", -1, 2**63 - 1)
    scol = _int(sp.col, pre + "col", -1, 2**63 - 1)
    nbits = 64 if prec == "d" else 32
    sbit = 0
    if cls == BitClass.EXACT:
        sbit = _int(sp.bit, pre + "bit", 0, nbits - swidth)
    elif spec is None and bit is not None:
        raise argument_error("bit", "is for bit_class 'exact' (bit_class %r draws the bit)"
                             % str(cls))
    fspec = FaultSpec(cls, sbit, swidth, snelems, srow, scol)

    # ---- sites
    site_list = _parse_sites(sites, opv)
    if not full:
        candidates = site_list if site_list is not None else list(_OP_SITES[opv])
        keep, first_bad = [], None
        for st in candidates:
            bad = _site_misfit(opv, st, mm, nn, kk, kind, fspec)
            if bad is None:
                keep.append(st)
            elif site_list is not None:  # a site asked for must hold the fault
                raise argument_error(pre + bad[0], "%s; leave %s out of sites or change %s"
                                     % (bad[1], st, pre + bad[0]))
            elif first_bad is None:
                first_bad = bad
        if not keep:
            raise argument_error(pre + first_bad[0], "%s, and no other site of op %r holds "
                                 "it" % (first_bad[1], _OP_NAMES[opv]))
        if site_list is None and len(keep) < len(candidates):
            warnings.warn("abft.campaign: %s %s; running at %s only" % (
                pre + first_bad[0], first_bad[1], ", ".join(str(s) for s in keep)),
                stacklevel=2)
            site_list = keep
    mask = 0
    for st in site_list or ():
        mask |= 1 << int(st)

    # ---- the C config
    cfg = _lib.abft_campaign_config_default()
    cfg.op = int(opv)
    cfg.precision = prec.encode()
    cfg.m, cfg.n, cfg.k = mm, nn, kk
    cfg.trials, cfg.controls, cfg.refresh = trials, controls, refresh
    cfg.sites = mask
    cfg.backend = int(bk)
    cfg.spec = fspec._to_c()
    cfg.checksum_kind = int(kind)
    cfg.bound_mode = int(bmode)
    cfg.bound_factor = bfactor
    cfg.guarantee = guarantee
    cfg.seed = seed
    cfg.only_trial = only
    cfg.lu_recovery = lurec
    cfg.space = int(spv)
    cfg.jobs = jobs
    cfg.random_checksum = rchk
    if rchk and full:  # (refused above; the C refuses it too)
        raise argument_error("random_checksum", "does not apply to space 'full'")

    # memory: every buffer must fit in int64 bytes and in this machine
    host, dev = ctypes.c_int64(), ctypes.c_int64()
    st = _lib.abft_campaign_memory(ctypes.byref(cfg), ctypes.byref(host), ctypes.byref(dev))
    if st != _SUCCESS:
        raise argument_error(size_arg, "the sizes m = %d, n = %d, k = %d need buffers that "
                                       "do not fit in a 64-bit size" % (mm, nn, kk))
    need = host.value + (dev.value if bk == Backend.CPU or not _lib.CUDA_BUILT else 0)
    phys = _physical_memory()
    if phys and need > phys:
        raise argument_error(size_arg, "the campaign needs %.3g GB of host memory (jobs = "
                                       "%d), this machine has %.3g GB" % (need / 1e9, jobs,
                                                                          phys / 1e9))

    config = {"op": _OP_NAMES[opv], "precision": prec, "trials": trials,
              "controls": controls, "m": mm, "n": nn, "k": kk, "backend": str(bk),
              "seed": seed, "space": str(spv),
              "sites": [str(s) for s in site_list] if site_list else
              [str(s) for s in _OP_SITES[opv]],
              "spec": fspec, "checksums": str(kind), "bound": str(bmode),
              "bound_factor": bfactor, "random_checksum": bool(rchk),
              "lu_recovery": bool(lurec), "guarantee": guarantee, "refresh": refresh,
              "jobs": jobs, "replay": replay}

    if on_interrupt not in ("raise", "return"):
        raise argument_error("on_interrupt", "%r is not 'raise' or 'return'" % (on_interrupt,))
    if progress is True:
        progress = _TextProgress()
    elif progress is not None and progress is not False and not callable(progress):
        raise argument_error("progress", "expected None, True or a callable fn(done, total)")
    columns = RECORD_COLUMNS + (FULL_COLUMNS if full else ()) + (DETAIL_COLUMNS if detail
                                                                  else ())
    return _run(cfg, config, columns, full, bool(records), bool(detail), progress or None,
                on_interrupt)


def _run(cfg, config, columns, full, keep, detail, progress, on_interrupt):
    stop = _lib.sig_atomic_t(0)
    col = _Collector(full, keep, detail, progress, stop)
    cfg.on_trial = col.c_on_trial
    cfg.progress = col.c_progress
    cfg.stop = ctypes.pointer(stop)
    summary = _lib.CampaignSummary()
    box = {}

    done = threading.Event()

    def work():
        try:
            st = _lib.abft_campaign_run(ctypes.byref(cfg), ctypes.byref(summary))
            if st != _SUCCESS:  # on this thread: abft_last_invalid_argument is per thread
                box["error"] = error_for(st, "abft_campaign_run")
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
        finally:
            done.set()

    # The campaign runs on its own thread and this one waits on an Event, which Ctrl-C
    # interrupts at once (Thread.join interrupted by KeyboardInterrupt may take a running
    # thread for finished on Python 3.11 and 3.12).
    worker = threading.Thread(target=work, name="abft-campaign")
    interrupted = False
    worker.start()
    try:
        while not done.wait(0.25):
            pass
    except KeyboardInterrupt:
        interrupted = True
        stop.value = 1  # no trial starts after this; the finished ones are passed on
        while not done.wait(0.25):  # a second Ctrl-C leaves here with KeyboardInterrupt
            pass
    worker.join()
    if col.error is not None:
        raise col.error
    if "error" in box:
        raise box["error"]
    result = CampaignResult(config, columns, col.rows, CampaignSummary(summary, cfg.space))
    if interrupted and on_interrupt == "raise":
        raise CampaignInterrupted(result)
    return result


# ---- the picture ---------------------------------------------------------------------------

# the tool's colours (tools/abft_svg.c), the outcomes that must be 0 on top
PLOT_ORDER = (
    ("masked", "masked", "#b8c4ce"),
    ("undetected", "undetected", "#d98cb3"),
    ("corrected", "corrected", "#2e8b57"),
    ("uncorrectable", "reported uncorrectable", "#e0a526"),
    ("gray", "gray zone", "#8e7cc3"),
    ("not_fired", "not reached", "#dddddd"),
    ("error", "error (must be 0)", "#444444"),
    ("miscorrected", "miscorrected (must be 0)", "#8b0000"),
    ("sdc", "SDC (must be 0)", "#e41a1c"),
)
_CONTROL_ORDER = (("clean", "clean control", "#a6d8a6"),
                  ("false_positive", "false positive (must be 0)", "#ff7f00"))


def plot_campaign(result, *, figsize=None, title=None):
    """A matplotlib Figure of a campaign's outcomes: the faulty trials by site (and the
    control trials), and each outcome's share by first flipped bit (most significant bit on
    the left). `result`: what abft.campaign returned, or its summary. In a notebook the
    Figure shows itself; elsewhere fig.savefig("campaign.png"). Needs matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("abft.plot_campaign needs matplotlib, which is not installed "
                          "(pip install matplotlib); the campaign's records and summary "
                          "do not need it") from e
    if isinstance(result, CampaignResult):
        s, cfg = result.summary, result.config
    elif isinstance(result, CampaignSummary):
        s, cfg = result, None
    else:
        raise argument_error("result", "expected what abft.campaign returned (or its "
                                       "summary)")
    fig = Figure(figsize=figsize or (12, 4.8), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 2.6]})

    # faulty trials by site, then the controls
    sites = list(s.by_site)
    labels = sites + (["controls"] if s.control_trials else [])
    x = range(len(labels))
    bottom = [0] * len(labels)
    for key, label, color in PLOT_ORDER:
        vals = [s.by_site[st][key] for st in sites] + ([0] if s.control_trials else [])
        if any(vals):
            ax1.bar(x, vals, bottom=bottom, color=color, label=label, edgecolor="white",
                    linewidth=0.5)
            bottom = [b + v for b, v in zip(bottom, vals)]
    if s.control_trials:
        for key, label, color in _CONTROL_ORDER:
            vals = [0] * len(sites) + [s.counts[key]]
            if any(vals):
                ax1.bar(x, vals, bottom=bottom, color=color, label=label, edgecolor="white",
                        linewidth=0.5)
                bottom = [b + v for b, v in zip(bottom, vals)]
        if s.control_errors:
            ax1.bar([len(sites)], [s.control_errors], bottom=[bottom[-1]], color="#444444",
                    label="control error (must be 0)")
    if bottom and max(bottom) > 0:
        ax1.set_ylim(0, 1.06 * max(bottom))
    ax1.set_xticks(list(x))
    ax1.set_xticklabels(labels, rotation=30, ha="right")
    ax1.set_ylabel("trials")
    ax1.set_title("outcomes by site")

    # the share of each outcome by first flipped bit. fp32 campaigns: the checksums are
    # fp64 words, so with the records at hand the fp32 data words are shown alone
    by_bit, bit_title = s.by_bit, "outcomes by bit position"
    if cfg is not None and cfg["precision"] == "s" and any(b >= 32 for b in s.by_bit):
        if isinstance(result, CampaignResult) and len(result):
            by_bit = {}
            for r in result.to_dicts():
                if not r["control"] and r["nflips"] and r["site"] != "checksum":
                    d = by_bit.setdefault(r["bit"], dict.fromkeys(OUTCOMES, 0))
                    d[r["outcome"]] += 1
            bit_title = "outcomes by bit position (fp32 data; the fp64 checksums by site)"
        else:
            bit_title = "outcomes by bit position (fp32 data and fp64 checksums together)"
    nbits = 64 if (cfg is None or cfg["precision"] == "d" or
                   any(b >= 32 for b in by_bit)) else 32
    bits = list(range(nbits - 1, -1, -1))
    totals = [sum(by_bit.get(b, {}).values()) for b in bits]
    bottom = [0.0] * nbits
    for key, label, color in PLOT_ORDER:
        vals = [by_bit[b][key] / t if t else 0.0 for b, t in zip(bits, totals)]
        if any(vals):
            ax2.bar(range(nbits), vals, bottom=bottom, color=color, width=0.9,
                    label=None if any(s.by_site[st][key] for st in sites) else label)
            bottom = [b + v for b, v in zip(bottom, vals)]
    # the sign / exponent / mantissa bands of the word
    mant = 52 if nbits == 64 else 23
    half = 26 if nbits == 64 else 12
    for lo, hi, name in ((nbits - 1, nbits - 1, "sign"), (mant, nbits - 2, "exponent"),
                         (half, mant - 1, "mantissa high"), (0, half - 1, "mantissa low")):
        xa, xb = nbits - 1 - hi, nbits - 1 - lo
        ax2.annotate(name, xy=((xa + xb) / 2, -0.085), xycoords=("data", "axes fraction"),
                     ha="center", va="top", fontsize=8, color="#555555")
        if lo > 0:
            ax2.axvline(xb + 0.5, color="#333333", linewidth=0.8, linestyle=":", zorder=3)
    ticks = [i for i, b in enumerate(bits) if b % 8 == 0 or b == nbits - 1]
    ax2.set_xticks(ticks)
    ax2.set_xticklabels([str(bits[i]) for i in ticks])
    ax2.set_xlim(-0.6, nbits - 0.4)
    ax2.set_ylim(0, 1)
    ax2.set_xlabel("first flipped bit (sign, exponent, mantissa)", labelpad=16)
    ax2.set_ylabel("share of the faulty trials")
    ax2.set_title(bit_title)
    try:  # matplotlib >= 3.7 places it beside the panels
        fig.legend(loc="outside right upper", fontsize=8, frameon=False)
    except ValueError:
        fig.legend(loc="upper right", fontsize=8, frameon=False)

    if title is None:
        what = ""
        if cfg is not None:
            dims = ("m = %d, n = %d, k = %d" % (cfg["m"], cfg["n"], cfg["k"])
                    if cfg["op"] == "gemm" else "n = %d" % cfg["n"])
            what = "%s %s, %s, space %s, " % (cfg["op"], "fp64" if cfg["precision"] == "d"
                                              else "fp32", dims, cfg["space"])
        title = "abft campaign: %s%d faulty + %d control trials, backend %s: %s" % (
            what, s.faulty_trials, s.control_trials, s.backend, s.verdict)
        if s.partial:
            title += " (stopped early: the trials run)"
    fig.suptitle(title, fontsize=10, color="#2e6b3f" if s.passed else "#c00000")
    return fig
