"""A fault-injection campaign from Python: flip bits in protected GEMMs (or LUs), compare
every result with a fault-free golden run, and count what happened.

    python3 examples/python/campaign.py [--op gemm] [--trials 500] [--controls 100]
                                        [--size 64] [--plot campaign.png]

The campaign is the library's (docs/campaign.md): the same options and seed give the same
trials as `abft campaign`. It prints the summary (outcome counts with Wilson intervals and
the verdict), the outcomes by site, and the trials that came closest to the guarantee; with
pandas installed the records are a DataFrame and a cross table is printed too; --plot
writes the picture of abft.plot_campaign (needs matplotlib). Ctrl-C stops the campaign
after the trials in progress and prints the trials that finished (marked partial). Exit
status: 0 when no SDC, miscorrection, false positive or error status occurred, 1 otherwise,
130 after Ctrl-C without such a failure.
"""

import argparse
import sys

import abft


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--op", default="gemm", help="gemm, getrf or getrf-online")
    p.add_argument("--precision", default="d", help="d (float64) or s (float32)")
    p.add_argument("--trials", type=int, default=500)
    p.add_argument("--controls", type=int, default=100)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--backend", default="auto", help="auto, cpu or cuda")
    p.add_argument("--space", default="fixed", help="fixed or full")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--plot", metavar="FILE", help="write the outcomes' picture (matplotlib)")
    a = p.parse_args(argv)

    res = abft.campaign(op=a.op, precision=a.precision, trials=a.trials,
                        controls=a.controls, size=a.size, seed=a.seed, backend=a.backend,
                        space=a.space, jobs=a.jobs, progress=sys.stderr.isatty() or None,
                        on_interrupt="return")
    print(res)  # the header, a line per outcome with its rate and Wilson interval, verdict
    s = res.summary

    print("\nfaulty trials by site:")
    for site, counts in s.by_site.items():
        struck = {o: c for o, c in counts.items() if c}
        print("  %-13s %s" % (site, ", ".join("%s %d" % oc for oc in struck.items())))

    # The records: one per trial (a DataFrame with pandas, else a list of dicts).
    rows = res.to_dicts()
    undetected = [r for r in rows if not r["control"] and r["detected"] == 0 and r["nflips"]]
    undetected.sort(key=lambda r: r["rho"], reverse=True)
    print("\nundetected changes closest to the guarantee (rho = change / bound; above "
          "g = %g an undetected change would be an SDC):" % res.config["guarantee"])
    for r in undetected[:3]:
        print("  trial %d: %s, bit %d of (%d, %d), rho %.3g, %s" % (
            r["trial"], r["site"], r["bit"], r["row"], r["col"], r["rho"], r["outcome"]))
    if not undetected:
        print("  none")

    records = res.records
    if not isinstance(records, list):  # pandas is installed
        import pandas as pd
        faulty = records[~records["control"]]
        print("\noutcome by bit class of the first flipped bit (pandas):")
        word = 64 if a.precision == "d" else 32
        mant = 52 if word == 64 else 23
        cls = pd.cut(faulty["bit"].astype(float), [-1, mant - 1, word - 2, word - 1],
                     labels=["mantissa", "exponent", "sign"])
        print(pd.crosstab(cls, faulty["outcome"]).to_string())

    if a.plot:
        fig = abft.plot_campaign(res)
        fig.savefig(a.plot, dpi=110)
        print("\npicture: %s" % a.plot)

    if not s.passed:
        return 1
    return 130 if s.partial else 0


if __name__ == "__main__":
    sys.exit(main())
