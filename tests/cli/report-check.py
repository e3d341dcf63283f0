#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# report-check.py: what t-report.sh asks of an HTML file of `pagecache bench
# report`, and of its screenshot. Each check prints one line, "ok NAME" or
# "FAIL NAME: why"; the exit status is 1 if any failed.
#   report-check.py doc HTML           one document, XML-clean, each SVG XML,
#                                      nothing outside it referenced
#   report-check.py sections HTML K... a section with a chart for each kind K
#                                      (warmup-1, readtwice, swapin-1, compare-1)
#   report-check.py numbers HTML JSON... the tables' numbers are the files'
#   report-check.py compare HTML ID CMP.json  table ID is `bench compare --json`'s
#   report-check.py drawn HTML         the values the charts draw are their tables'

#   report-check.py pixels PNG MIN     at least MIN of the pixels are not white
#   report-check.py cell HTML TABLE ROW COL    print one cell's text
# Several in one run: CMD ARGS... :: CMD ARGS...
import json
import re
import statistics
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

failed = False


def check(name, cond, why=''):
    global failed
    if cond:
        print('ok', name)
    else:
        failed = True
        print('FAIL', name + (': ' + why if why else ''))


def parse(path):
    text = open(path, encoding='utf-8').read()
    return text, ET.fromstring(re.sub(r'^<!DOCTYPE html>', '', text))


def tables(root):
    out = {}
    for t in root.iter('table'):
        rows = []
        for tr in t.iter('tr'):
            rows.append([''.join(c.itertext()) for c in tr if c.tag in ('td', 'th')])
        out[t.get('id')] = rows
    return out


def num(s):
    return float('nan') if s in ('n/a', '') else float(s)


def same(a, b):
    return a == b or (a != a and b != b)


def cmd_doc(path):
    text, root = parse(path)
    check('the file is one HTML document', root.tag == 'html' and text.count('<html') == 1
          and text.rstrip().endswith('</html>'))
    svgs = re.findall(r'<svg\b.*?</svg>', text, re.S)
    bad = []
    for s in svgs:
        try:
            e = ET.fromstring(s)
            if e.tag != '{http://www.w3.org/2000/svg}svg':
                bad.append(e.tag)
        except ET.ParseError as err:
            bad.append(str(err))
    check('it has SVG charts (%d)' % len(svgs), len(svgs) > 0)
    check('each SVG parses as XML on its own', not bad, '; '.join(bad[:3]))
    # markup only: text is escaped, so a '<' in it is never raw
    tags = re.findall(r'<[^>]*>', text)
    refs = [r for t in tags for r in re.findall(
        r'''\b(?:src|href|xlink:href|action|formaction|srcset|poster|data|background)\s*=\s*["']?([^"'\s>]*)''',
        t, re.I)]
    check('no src= or href= but to #fragments (%d hrefs)' % len(refs), all(r.startswith('#') for r in refs),
          ' '.join(r for r in refs if not r.startswith('#'))[:200])
    styles = ' '.join(tags) + ' '.join(re.findall(r'<style>(.*?)</style>', text, re.S))
    check('no url( and no @import in markup or style', not re.search(r'url\s*\(|@import', styles, re.I))
    check('no event handler attribute', not any(re.search(r'\son[a-z]+\s*=', t, re.I) for t in tags))
    bad = [t for t in tags if re.match(
        r'<\s*(script|link|img|iframe|object|embed|image|use|foreignObject|audio|video|base)\b', t, re.I)]
    check('no script, link, img, iframe, object, embed, image, use, base element', not bad,
          ' '.join(bad[:5]))
    check('a Content-Security-Policy of default-src none',
          "default-src 'none'" in text and 'Content-Security-Policy' in text)


def cmd_sections(path, kinds):
    _, root = parse(path)
    ids = {s.get('id'): s for s in root.iter('section')}
    for k in kinds:
        sec = ids.get(k)
        n = 0 if sec is None else sum(1 for e in sec.iter() if e.tag.endswith('svg'))
        check('a section %s with a chart' % k, n > 0, 'section missing' if sec is None else 'no svg')


def metric(row, name):
    return row.get('metrics', {}).get(name)


def stated(j, k):
    """a metric's mean, min or max as the report reads it: the file's own where it
    states it (min and max together), else of its per-run values"""
    isnum = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
    if j is None:
        return float('nan')
    v = j.get('values') or []
    if k == 'mean':
        return j['mean'] if isnum(j.get('mean')) else sum(v) / len(v) if v else float('nan')
    if isnum(j.get('min')) and isnum(j.get('max')):
        return j[k]
    return (min(v) if k == 'min' else max(v)) if v else float('nan')


def close(a, b):
    """equal to the 10 significant digits the report (as the project's JSON writer) prints"""
    return same(a, b) or abs(a - b) <= 1e-9 * abs(b)


def cmd_numbers(path, files):
    _, root = parse(path)
    t = tables(root)
    docs = [json.load(open(f)) for f in files]
    nwarm = nswap = 0
    for d in docs:
        if d.get('bench') == 'warmup':
            nwarm += 1
            tid = 'warmup-%d-table' % nwarm
            rows = t.get(tid, [])[1:]
            want = sum(1 for r in d['results'] for m in r['metrics'] if re.fullmatch(r'q\d+_ms', m))
            check('%s has a line per condition and query (%d)' % (tid, want), len(rows) == want,
                  'got %d' % len(rows))
            bad = []
            for cond, m, trials, lo, med, hi, mean, unit in rows:
                r = next(x for x in d['results'] if x['condition'] == cond)
                j = metric(r, m)
                vals = j.get('values') or []
                if not (close(num(lo), j['min']) and close(num(hi), j['max']) and
                        close(num(mean), j['mean']) and int(trials) == len(vals) and
                        close(num(med), statistics.median(vals)) and unit == j.get('unit')):
                    bad.append('%s %s' % (cond, m))
            check('%s: min, median, max, mean are the JSON\'s' % tid, not bad, ', '.join(bad[:5]))
        elif d.get('bench') == 'swapin':
            nswap += 1
            rows = []
            for k, v in t.items():
                if k and re.fullmatch(r'swapin-%d-w\d+-table' % nswap, k):
                    rows += v[1:]
            want = sum(1 for r in d['results'] if isinstance(r.get('workload'), str))
            check('swapin-%d tables have a line per row (%d)' % (nswap, want), len(rows) == want,
                  'got %d' % len(rows))
            bad = []
            for wl, vma, pc, runs, *cells in rows:
                r = next(x for x in d['results'] if x['workload'] == wl and x.get('vma_ra', '(all)') == vma
                         and (pc == 'auto' and x['page_cluster'] == 'auto' or pc != 'auto'
                              and x['page_cluster'] != 'auto' and num(pc) == x['page_cluster']))
                for i, m in enumerate(('real', 'pgmajfault')):
                    j = metric(r, m)
                    got = [num(c) for c in cells[3 * i:3 * i + 3]]
                    exp = [stated(j, k) for k in ('mean', 'min', 'max')]
                    if not all(close(a, b) for a, b in zip(got, exp)):
                        bad.append('%s %s pc=%s %s %s %s' % (wl, vma, pc, m, got, exp))
                if int(runs) != r['runs']:
                    bad.append('%s runs' % wl)
            check('swapin-%d: real and major faults (mean, min, max) are the JSON\'s' % nswap, not bad,
                  '; '.join(bad[:3]))
    rt = [d for d in docs if d.get('bench') == 'readtwice']
    if rt:
        rows = t.get('readtwice-table', [])[1:]
        want = sum(len(d['results']) for d in rt)
        check('readtwice-table has a line per row (%d)' % want, len(rows) == want, 'got %d' % len(rows))
        bad = []
        for cells in rows:
            d = rt[[f for f, x in zip(files, docs) if x.get('bench') == 'readtwice'].index(
                next(f for f in files if f == cells[0]))]
            r = next(x for x in d['results'] if x.get('layout', '?') == cells[1] and
                     same(float(x.get('cgroups', float('nan'))), num(cells[4])))
            j = metric(r, 'aggregate_mbps')
            exp = [stated(j, k) for k in ('mean', 'min', 'max')]
            got = [num(c) for c in cells[6:9]]
            if not (cells[1] == r['layout'] and num(cells[4]) == r['cgroups'] and
                    all(close(a, b) for a, b in zip(got, exp))):
                bad.append('%s %s %s %s' % (cells[1], cells[4], got, exp))
        check('readtwice-table: aggregate MB/s (mean, min, max) are the JSON\'s', not bad, '; '.join(bad[:3]))


def marks(svg, tag):
    """(title, value) of each tag element of svg with a <title>NAME: VALUE</title>"""
    out = []
    for e in svg.iter('{http://www.w3.org/2000/svg}' + tag):
        t = e.find('{http://www.w3.org/2000/svg}title')
        if t is not None and ': ' in (t.text or ''):
            name, v = t.text.rsplit(': ', 1)
            out.append((name, num(v)))
    return out


def cmd_drawn(path):
    """what the charts draw (each mark's title) is in the table under them"""
    _, root = parse(path)
    t = tables(root)
    for sec in root.iter('section'):
        sid = sec.get('id')
        svgs = list(sec.iter('{http://www.w3.org/2000/svg}svg'))
        bad, n = [], 0
        if sid.startswith('warmup-'):
            rows = t[sid + '-table'][1:]
            for svg in svgs:
                for name, v in marks(svg, 'rect'):
                    cond, q = name.rsplit(', ', 1)
                    m = re.search(r'\((q\d+_ms)\)', q).group(1)
                    r = next(r for r in rows if r[0] == cond and r[1] == m)
                    exp = num(r[4]) if r[4] != 'n/a' else num(r[6])
                    n += 1
                    if not close(v, exp):
                        bad.append('%s %s %s %s' % (cond, m, v, exp))
        elif sid == 'readtwice':
            rows = t['readtwice-table'][1:]
            for svg in svgs:
                for name, v in marks(svg, 'rect'):
                    cg, ser = name.split(', ', 1)
                    r = next(r for r in rows if num(r[4]) == num(cg) and
                             ser == r[1] + ('' if r[2] == 'none' else ', limit ' + r[2]))
                    n += 1
                    if not close(v, num(r[6])):
                        bad.append('%s %s %s %s' % (cg, ser, v, r[6]))
        elif sid.startswith('swapin-'):
            rows = [r for k, v in t.items() if k and k.startswith(sid + '-w') for r in v[1:]]
            for svg in svgs:
                title = svg.find('{http://www.w3.org/2000/svg}title').text
                wl, what = title.rsplit(': ', 1)
                col = 4 if what == 'real time' else 7
                for tag in ('circle', 'path'):
                    for name, v in marks(svg, tag):
                        if tag == 'path':
                            vma, pc = name.split(', ', 1)[1], 'auto'
                        else:
                            vma, pc = name.rsplit(', ', 1)
                        r = next(r for r in rows if r[0] == wl and r[1] == vma and
                                 (r[2] == pc if pc == 'auto' else r[2] != 'auto' and num(r[2]) == num(pc)))
                        n += 1
                        if not close(v, num(r[col])):
                            bad.append('%s %s %s %s %s' % (wl, vma, pc, v, r[col]))
        else:
            continue
        check('%s: the %d values drawn are the table\'s' % (sid, n), n > 0 and not bad, '; '.join(bad[:3]))


def cmd_compare(path, tid, cmp_json):
    _, root = parse(path)
    rows = tables(root).get(tid, [])[1:]
    c = json.load(open(cmp_json))['comparisons']
    check('%s has a line per comparison (%d)' % (tid, len(c)), len(rows) == len(c), 'got %d' % len(rows))
    bad = []
    for cells, x in zip(rows, c):
        row, met, unit, better, kind, bm, bsd, nm, nsd, pd, p, sig, mm, runs = cells
        exp = [x['base_mean'], x['base_stddev'], x['new_mean'], x['new_stddev'], x['pdiff']]
        got = [num(v) for v in (bm, bsd, nm, nsd, pd)]
        ok = row == x['row'] and met == x['metric'] and better == x['better'] and kind == x['mean_kind']
        # both print %.10g of the same double: the same number
        ok = ok and all(same(a, b) for a, b in zip(got, exp))
        ok = ok and (sig == '*') == x['significant'] and (mm == '+') == x['mmtests_significant']
        if x['welch_p'] is not None:
            ok = ok and num(p) == x['welch_p']
        if not ok:
            bad.append('%s %s' % (row, met))
    check('%s: means, stddevs, change, p and marks are bench compare\'s' % tid, not bad, ', '.join(bad[:5]))


def png_pixels(path):
    d = open(path, 'rb').read()
    if d[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    i, idat = 8, b''
    while i < len(d):
        n, = struct.unpack('>I', d[i:i + 4])
        kind, body = d[i + 4:i + 8], d[i + 8:i + 8 + n]
        i += 12 + n
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError('PNG kind not read here: depth %d type %d' % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
    raw, stride, p = zlib.decompress(idat), w * bpp, 0
    prev = bytearray(stride)
    other = 0
    for _ in range(h):
        f = raw[p]
        line = bytearray(raw[p + 1:p + 1 + stride])
        p += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((a + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b, c = prev[x], prev[x - bpp] if x >= bpp else 0
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            if line[x] < 240 or line[x + 1] < 240 or line[x + 2] < 240:
                other += 1
        prev = line
    return w * h, other


def main():
    # CMD ARGS... [:: CMD ARGS...]: several checks in one run (python starts once)
    argv, rc = sys.argv[1:], 0
    while argv:
        end = argv.index('::') if '::' in argv else len(argv)
        rc |= one(argv[0], argv[1:end])
        argv = argv[end + 1:]
    return rc


def one(cmd, args):
    try:
        return one_(cmd, args)
    except Exception as e:  # a file that does not parse, a table that is not there
        check('%s %s' % (cmd, ' '.join(args[:1])), False, '%s: %s' % (type(e).__name__, e))
        return 1


def one_(cmd, args):
    if cmd == 'doc':
        cmd_doc(args[0])
    elif cmd == 'sections':
        cmd_sections(args[0], args[1:])
    elif cmd == 'numbers':
        cmd_numbers(args[0], args[1:])
    elif cmd == 'compare':
        cmd_compare(args[0], args[1], args[2])
    elif cmd == 'drawn':
        cmd_drawn(args[0])
    elif cmd == 'pixels':
        total, other = png_pixels(args[0])
        check('%d of %d pixels are not white (at least %s)' % (other, total, args[1]),
              other >= float(args[1]) * total)
    elif cmd == 'cell':
        _, root = parse(args[0])
        print(tables(root)[args[1]][int(args[2])][int(args[3])])
    return 1 if failed else 0


sys.exit(main())
