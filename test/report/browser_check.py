#!/usr/bin/env python3
"""Renders a `kacct report` page in Debian's headless chromium and checks it (ctest label browser):
the page ran to its end (data-ready) with no script error (the page's error hook writes
data-error; chromium's console errors on stderr count too), the screenshot is not blank (enough
pixels differ from the white background), and each --expect ID=CLASS element is in the DOM with
that class. Exit 0 pass, 1 fail; without chromium it prints why and exits 77 (ctest: skipped).

usage: browser_check.py PAGE.html [--expect ID[=CLASS]]... [--min-ink FRACTION] [--png OUT.png]
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]


def start(browser, args, profile):
    """One chromium with its own fresh profile; the DOM dump and the screenshot run side by side."""
    cmd = [browser] + FLAGS + ["--user-data-dir=" + profile] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc, timeout=60):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of a non-interlaced 8-bit RGB/RGBA PNG (chromium's)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def ink(path):
    """Fraction of pixels that are not (near) white."""
    w, h, bpp, rows = png_pixels(path)
    dark = 0
    for line in rows:
        for i in range(0, w * bpp, bpp):
            if line[i] < 235 or line[i + 1] < 235 or line[i + 2] < 235:
                dark += 1
    return dark / float(w * h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--expect", action="append", default=[], help="ID or ID=CLASS (a class of the element)")
    ap.add_argument("--min-ink", type=float, default=0.005)
    ap.add_argument("--png", help="keep the screenshot here")
    ap.add_argument("--size", default="1300,1000")
    a = ap.parse_args()
    browser = chromium()
    if not browser:
        print("SKIP: no chromium on PATH (Debian: apt-get install chromium; setup.sh installs it)")
        return SKIP
    page = os.path.abspath(a.page)
    html = open(page, encoding="utf-8").read()
    bad = []
    # Offline by construction: no URL the browser would fetch.
    for m in re.finditer(r'(?:src|href)\s*=\s*"(?!#)([^"]*)"', html):
        bad.append(f"the page refers to {m.group(1)!r}")
    if re.search(r"https?://", html):
        bad.append("the page contains an http(s) URL")
    with tempfile.TemporaryDirectory(prefix="kacct-chromium-") as tmp:
        png = a.png or os.path.join(tmp, "shot.png")
        if os.path.exists(png):
            os.remove(png)
        dom_p = start(browser, ["--dump-dom", "file://" + page], os.path.join(tmp, "profile"))
        shot_p = start(browser, ["--screenshot=" + png, "--window-size=" + a.size, "file://" + page],
                       os.path.join(tmp, "profile2"))
        dom, shot = finish(dom_p), finish(shot_p)
        text = dom.stdout.decode("utf-8", "replace")
        err = dom.stderr.decode("utf-8", "replace")
        if dom.returncode != 0 or not text.strip():
            print(err[-3000:])
            bad.append(f"chromium --dump-dom failed (exit {dom.returncode})")
        if 'data-ready="1"' not in text:
            bad.append("the page did not run to its end (no data-ready on <body>)")
        m = re.search(r'data-error="([^"]*)"', text)
        if m:
            bad.append("script error in the page: " + m.group(1))
        for line in err.splitlines():
            if "CONSOLE" in line and ("Uncaught" in line or "rror" in line):
                bad.append("console: " + line.strip())
        for e in a.expect:
            ident, _, cls = e.partition("=")
            m = re.search(r"<[a-z][a-z0-9]*\b[^>]*\bid=\"" + re.escape(ident) + r"\"[^>]*>", text)
            if not m:
                bad.append(f"no element with id {ident!r} in the DOM")
                continue
            if cls:
                mc = re.search(r'\bclass="([^"]*)"', m.group(0))
                classes = mc.group(1).split() if mc else []
                if cls not in classes:
                    bad.append(f"element {ident!r} has class {' '.join(classes)!r}, expected {cls!r}")
        if shot.returncode != 0 or not os.path.exists(png):
            print(shot.stderr.decode("utf-8", "replace")[-3000:])
            bad.append(f"chromium --screenshot failed (exit {shot.returncode})")
        else:
            f = ink(png)
            print(f"screenshot: {f:.3f} of the pixels are not background (need >= {a.min_ink})")
            if f < a.min_ink:
                bad.append(f"the screenshot is blank ({f:.4f} of the pixels drawn)")
    for b in bad:
        print("FAIL:", b)
    if not bad:
        print(f"ok: {a.page} loads without errors, draws, and has {len(a.expect)} expected elements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
