#!/usr/bin/env python3
"""Draw one chart from a CSV or Excel file and save it as a PNG.

  chart.py describe --input data.xlsx            # sheets, columns, types
  chart.py plot --input data.csv --x Region --y Revenue --kind bar \
      --output /mnt/user-data/outputs/revenue.png

Needs python3 with pandas and matplotlib (openpyxl for .xlsx). Works offline.
"""
import argparse
import importlib.util
import os
import sys
import tempfile

KINDS = ("bar", "barh", "line", "area", "scatter", "pie", "hist")
AGGS = ("sum", "mean", "median", "count", "min", "max", "none")


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


def matplotlib_env():
    """A writable config dir, and the default matplotlibrc when Debian's
    /etc/matplotlibrc is not visible (as in a sandbox showing only /usr)."""
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "matplotlib"))
    if "MATPLOTLIBRC" in os.environ or os.path.exists("/etc/matplotlibrc"):
        return
    spec = importlib.util.find_spec("matplotlib")
    pkg = list(spec.submodule_search_locations or []) if spec else []
    dirs = ["/usr/share/matplotlib/mpl-data"] + [os.path.join(p, "mpl-data") for p in pkg]
    for d in dirs:
        if os.path.isfile(os.path.join(d, "matplotlibrc")):
            os.environ["MATPLOTLIBRC"] = d
            return


def need_pandas():
    try:
        import pandas  # noqa: F401
    except ImportError:
        fail("pandas is not installed (Debian: apt-get install python3-pandas)")
    return pandas


def read_table(path, sheet):
    """Return (DataFrame, sheet names or None)."""
    pd = need_pandas()
    if not os.path.isfile(path):
        fail("no such file: %s" % path)
    ext = os.path.splitext(path)[1].lower()
    if ext in (".xlsx", ".xlsm"):
        try:
            import openpyxl  # noqa: F401
        except ImportError:
            fail("reading .xlsx needs openpyxl (apt-get install python3-openpyxl); or export the sheet as CSV")
        try:
            book = pd.ExcelFile(path, engine="openpyxl")
        except Exception as e:  # a damaged or mislabelled file
            fail("cannot open %s as an Excel workbook: %s" % (path, e))
        names = book.sheet_names
        if sheet is None:
            sheet = names[0]
        elif sheet not in names:
            if sheet.isdigit() and int(sheet) < len(names):
                sheet = names[int(sheet)]
            else:
                fail("no sheet %r in %s; sheets: %s" % (sheet, path, ", ".join(names)))
        try:
            return book.parse(sheet), names, sheet
        except Exception as e:
            fail("cannot read sheet %r: %s" % (sheet, e))
    if ext == ".xls":
        fail("old .xls workbooks are not supported here; save the sheet as .xlsx or .csv")
    if ext in (".csv", ".tsv", ".txt"):
        for enc in ("utf-8-sig", "latin-1"):
            try:
                return pd.read_csv(path, sep=None, engine="python", encoding=enc), None, None
            except UnicodeDecodeError:
                continue
            except Exception as e:
                fail("cannot read %s as CSV: %s" % (path, e))
    if ext == ".json":
        try:
            return pd.read_json(path), None, None
        except Exception as e:
            fail("cannot read %s as a JSON table: %s" % (path, e))
    fail("unsupported file type %r: use .csv, .tsv, .xlsx or .json" % ext)


def describe(args):
    df, sheets, sheet = read_table(args.input, args.sheet)
    if sheets:
        print("sheets: " + ", ".join(sheets))
        print("sheet shown: " + sheet)
    print("rows: %d, columns: %d" % df.shape)
    for col in df.columns:
        s = df[col]
        print("- %s: %s, %d missing, e.g. %s" % (col, s.dtype, s.isna().sum(), list(s.dropna().head(3))))
    return 0


def column(df, name):
    if name in df.columns:
        return name
    for c in df.columns:  # forgive case and surrounding spaces
        if str(c).strip().lower() == name.strip().lower():
            return c
    fail("no column %r; columns: %s" % (name, ", ".join(str(c) for c in df.columns)))


def prepare(df, args):
    pd = need_pandas()
    if df.empty:
        fail("the table is empty")
    ys = [column(df, y) for y in args.y] if args.y else []
    x = column(df, args.x) if args.x else None
    if args.kind != "hist" and x is None:
        fail("--x is required for a %s chart" % args.kind)
    if not ys:
        fail("--y names at least one numeric column")
    for y in ys:
        df[y] = pd.to_numeric(df[y], errors="coerce")
        if df[y].notna().sum() == 0:
            fail("column %r has no numbers" % y)
    if args.drop and x is not None:
        df = df[~df[x].astype(str).str.strip().str.lower().isin([d.lower() for d in args.drop])]
    if args.kind == "hist":
        return df[ys].dropna(how="all"), x, ys
    df = df.dropna(subset=[x])
    if args.agg != "none" and args.kind != "scatter":
        if args.agg == "count":
            df = df.groupby(x, sort=False)[ys].count().reset_index()
        else:
            df = df.groupby(x, sort=False)[ys].agg(args.agg).reset_index()
    if args.sort == "desc":
        df = df.sort_values(ys[0], ascending=False)
    elif args.sort == "asc":
        df = df.sort_values(ys[0])
    elif args.sort == "x":
        df = df.sort_values(x)
    if args.top:
        df = df.head(args.top)
    if df.empty:
        fail("no rows are left to plot")
    return df, x, ys


def draw(df, x, ys, args):
    matplotlib_env()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is not installed (Debian: apt-get install python3-matplotlib)")
    fig, ax = plt.subplots(figsize=(args.width, args.height))
    if args.kind == "pie":
        ax.pie(df[ys[0]], labels=df[x].astype(str), autopct="%1.0f%%", startangle=90, counterclock=False)
        ax.axis("equal")
    elif args.kind == "hist":
        ax.hist([df[y].dropna() for y in ys], bins=args.bins, label=ys)
        ax.set_ylabel(args.ylabel or "count")
    elif args.kind == "scatter":
        for y in ys:
            ax.scatter(df[x], df[y], label=y, alpha=0.8)
    else:
        plot = df.set_index(x)[ys]
        plot.plot(kind=args.kind, ax=ax, legend=len(ys) > 1, rot=0 if args.kind != "bar" or len(plot) < 8 else 45)
    if args.kind != "pie":
        ax.set_xlabel(args.xlabel if args.xlabel is not None else (x or ys[0]))
        if args.kind != "hist":
            ax.set_ylabel(args.ylabel if args.ylabel is not None else ", ".join(ys))
        ax.grid(axis="y" if args.kind != "barh" else "x", alpha=0.3)
        if len(ys) > 1 and args.kind in ("scatter", "hist"):
            ax.legend()
    ax.set_title(args.title or "%s by %s" % (", ".join(ys), x or "value"))
    if args.source:
        fig.text(0.01, 0.01, "Source: " + args.source, fontsize=8, color="#555555")
    fig.tight_layout()
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        fail("the output folder does not exist: %s" % out_dir)
    fig.savefig(args.output, dpi=args.dpi, bbox_inches="tight")
    plt.close(fig)


def plot(args):
    if not args.output.lower().endswith(".png"):
        fail("--output must end in .png")
    df, _, sheet = read_table(args.input, args.sheet)
    df, x, ys = prepare(df, args)
    if args.kind == "pie" and (df[ys[0]] < 0).any():
        fail("a pie chart cannot show negative values; use --kind bar")
    try:
        draw(df, x, ys, args)
    except (ValueError, TypeError) as e:  # e.g. dates on a histogram, text on a scatter axis
        fail("cannot draw a %s chart of this data: %s" % (args.kind, e))
    where = " (sheet %s)" % sheet if sheet else ""
    print("wrote %s: %s chart of %s from %d rows of %s%s" % (args.output, args.kind, ", ".join(map(str, ys)), len(df), args.input, where))
    print("next: present it with present_files")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description="Chart a CSV/Excel table as a PNG.")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("describe", help="list sheets, columns and their types")
    d.add_argument("--input", required=True)
    d.add_argument("--sheet", help="sheet name or index (Excel); default the first")
    c = sub.add_parser("plot", help="draw a chart")
    c.add_argument("--input", required=True)
    c.add_argument("--sheet")
    c.add_argument("--x", help="category, date or x column")
    c.add_argument("--y", nargs="+", help="one or more numeric columns")
    c.add_argument("--kind", choices=KINDS, default="bar")
    c.add_argument("--agg", choices=AGGS, default="sum", help="how rows sharing an x are combined (default sum)")
    c.add_argument("--sort", choices=("none", "asc", "desc", "x"), default="none")
    c.add_argument("--top", type=int, help="keep the first N rows after sorting")
    c.add_argument("--drop", nargs="+", help="x values to leave out, e.g. Total")
    c.add_argument("--title")
    c.add_argument("--xlabel")
    c.add_argument("--ylabel")
    c.add_argument("--source", help="source note printed under the chart")
    c.add_argument("--bins", type=int, default=20)
    c.add_argument("--width", type=float, default=9)
    c.add_argument("--height", type=float, default=5)
    c.add_argument("--dpi", type=int, default=150)
    c.add_argument("--output", required=True, help="PNG path, e.g. /mnt/user-data/outputs/chart.png")
    args = p.parse_args(argv)
    return describe(args) if args.cmd == "describe" else plot(args)


if __name__ == "__main__":
    sys.exit(main())
