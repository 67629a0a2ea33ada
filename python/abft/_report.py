"""The report of a protected call (abft_report_t) and the records of fault injection, as
Python objects with named fields and enums (docs/api.md, "abft_report_t")."""

from ._enums import Action, Factor, Side, Site


class Fault:
    """One detected fault (abft_fault_t). row, col: 0-based indices into the result in the
    orientation of the Python arrays (a C-ordered result is reported as the arrays are
    indexed, not as the library stored it), None when not located."""

    __slots__ = ("row", "col", "delta", "ratio", "action", "factor", "side")

    def __init__(self, row, col, delta, ratio, action, factor, side):
        self.row, self.col, self.delta, self.ratio = row, col, delta, ratio
        self.action, self.factor, self.side = action, factor, side

    @classmethod
    def _from_c(cls, f, transposed=False):
        row = None if f.row < 0 else int(f.row)
        col = None if f.col < 0 else int(f.col)
        side = _enum(Side, f.side)
        if transposed:  # the library saw C^T: its rows are the array's columns
            row, col = col, row
            if isinstance(side, Side):
                side = Side.COLUMN if side == Side.ROW else Side.ROW
        return cls(row, col, float(f.delta), float(f.ratio), _enum(Action, f.action),
                   _enum(Factor, f.factor), side)

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __eq__(self, other):
        return isinstance(other, Fault) and self.as_dict() == other.as_dict()

    def __repr__(self):
        return ("Fault(row=%r, col=%r, delta=%.6g, ratio=%.6g, action=%s, factor=%s, side=%s)"
                % (self.row, self.col, self.delta, self.ratio, self.action, self.factor,
                   self.side))


def _enum(cls, v):
    try:
        return cls(int(v))
    except ValueError:
        return int(v)


class Report:
    """What a protected call checked, detected, located and did (abft_report_t).

    Counts: checked, detected, corrected, uncorrectable, recomputed, checksum_faults;
    flags: nonfinite_input, spread (LU); max_ratio, unit_roundoff; worst_case_rows (the
    checked entries compared against the worst-case bound although the tight mode was asked
    for); faults: a tuple of Fault (at most 16). `ok` is the caller's rule of thumb: no entry left uncorrectable
    (the call itself succeeded, or it would have raised)."""

    __slots__ = ("checked", "detected", "corrected", "uncorrectable", "recomputed",
                 "checksum_faults", "nonfinite_input", "spread", "max_ratio",
                 "unit_roundoff", "worst_case_rows", "faults", "transposed")

    @classmethod
    def _from_c(cls, r, transposed=False):
        self = cls.__new__(cls)
        self.checked = r.checked
        self.detected = r.detected
        self.corrected = r.corrected
        self.uncorrectable = r.uncorrectable
        self.recomputed = r.recomputed
        self.checksum_faults = r.checksum_faults
        self.nonfinite_input = bool(r.nonfinite_input)
        self.spread = bool(r.spread)
        self.max_ratio = r.max_ratio
        self.unit_roundoff = r.unit_roundoff
        self.worst_case_rows = r.worst_case_rows
        n = r.nfaults
        if n > 0:
            fs = r.faults
            self.faults = tuple(Fault._from_c(fs[i], transposed)
                                for i in range(min(n, len(fs))))
        else:
            self.faults = ()
        self.transposed = bool(transposed)
        return self

    @property
    def ok(self):
        return self.uncorrectable == 0 and not self.nonfinite_input

    def as_dict(self):
        d = {k: getattr(self, k) for k in self.__slots__ if k != "faults"}
        d["faults"] = [f.as_dict() for f in self.faults]
        return d

    def __repr__(self):
        s = ("Report(checked=%d, detected=%d, corrected=%d, uncorrectable=%d, recomputed=%d, "
             "checksum_faults=%d, max_ratio=%.3g" % (
                 self.checked, self.detected, self.corrected, self.uncorrectable,
                 self.recomputed, self.checksum_faults, self.max_ratio))
        if self.nonfinite_input:
            s += ", nonfinite_input=True"
        if self.spread:
            s += ", spread=True"
        if self.faults:
            s += ", faults=%r" % (list(self.faults),)
        return s + ")"


class Flip:
    """One recorded bit flip (abft_flip_t): site (Site, or None for a direct inject),
    which, firing, precision ('d' or 's'), row, col (in the array the hook or the caller
    passed, column-major as the library sees it), bit, width, old_value, new_value,
    old_bits, new_bits."""

    __slots__ = ("site", "which", "firing", "precision", "row", "col", "bit", "width",
                 "old_value", "new_value", "old_bits", "new_bits")

    @classmethod
    def _from_c(cls, f):
        self = cls.__new__(cls)
        self.site = None if f.site < 0 else _enum(Site, f.site)
        self.which = f.which
        self.firing = f.firing
        self.precision = f.precision.decode()
        self.row, self.col = f.row, f.col
        self.bit, self.width = f.bit, f.width
        self.old_value, self.new_value = f.old_value, f.new_value
        self.old_bits, self.new_bits = f.old_bits, f.new_bits
        return self

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self):
        return ("Flip(site=%s, which=%d, row=%d, col=%d, bit=%d, width=%d, %r -> %r)" % (
            self.site, self.which, self.row, self.col, self.bit, self.width,
            self.old_value, self.new_value))
