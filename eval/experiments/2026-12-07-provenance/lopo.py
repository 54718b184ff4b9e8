"""Leave one product out over eval/train + eval/dev: a logistic relevance model over the dumped
candidates of terms mode, with and without the observation's provenance (run from the repo root,
FEAT_DIR as in ../2026-11-27-normalized-scorer)."""
import math, os, sys
import numpy as np
from sklearn.linear_model import LogisticRegression
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', '2026-11-27-normalized-scorer'))
sys.path.insert(0, here)
from load import load, metrics, idf1, current
from obs import load_obs

OBS = {**load_obs('eval/train/memory'), **load_obs('eval/dev/memory')}

def features(d, provenance):
    """Per candidate: normalized score (title counts twice), matched weight in units of a unique
    word, share of the best normalized score; then same source test, test/suite tier."""
    st = d['step']
    if not st or not st['terms']:
        return []
    terms, n = st['terms'], st['pool']
    known = sum(t['w'] for t in terms)
    rows = []
    for c in d['cands']:
        raw = sum(t['w'] for t in terms if c['a'] & t['bit'])
        title = sum(t['w'] for t in terms if c['a'] & t['bit'] and c['t'] & t['bit'])
        rows.append([c['id'], (raw + title) / (2 * known), raw / idf1(n)])
    best = max(r[1] for r in rows)
    out = []
    for cid, s, units in rows:
        f = [s, units, s / best]
        if provenance:
            o = OBS[cid]
            f += [float(o.get('source_test') == d['q']['test']), float(o['tier'] != 'products')]
        out.append((cid, f, cid in d['rel']))
    return out

def run(data, provenance, floor):
    products = sorted({d['q']['product'] for d in data})
    chosen = {}
    for held in products:
        rows = [r for d in data if d['q']['product'] != held for r in features(d, provenance)]
        X = np.array([r[1] for r in rows]); y = np.array([r[2] for r in rows])
        mu, sd = X.mean(0), X.std(0) + 1e-9
        model = LogisticRegression(max_iter=5000).fit((X - mu) / sd, y)
        for d in data:
            if d['q']['product'] != held:
                continue
            rs = features(d, provenance)
            if not rs:
                chosen[id(d)] = []
                continue
            p = model.predict_proba((np.array([r[1] for r in rs]) - mu) / sd)[:, 1]
            order = sorted(range(len(rs)), key=lambda k: -p[k])
            chosen[id(d)] = [rs[k][0] for k in order if p[k] >= floor]
    return metrics(data, lambda d: chosen[id(d)])

data = load('train') + load('dev')
print('rules of index/terms.rs (tuned on dev)', metrics(data, current))
for provenance in (False, True):
    for floor in (0.3, 0.4, 0.5):
        print('provenance' if provenance else 'lexical only', floor, run(data, provenance, floor))
