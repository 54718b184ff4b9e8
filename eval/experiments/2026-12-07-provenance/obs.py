"""Observation frontmatter (id, source_test, tier) of an eval set's memory root."""
import glob, os, yaml

def load_obs(memory_root):
    obs = {}
    for p in glob.glob(os.path.join(memory_root, '**', '*.md'), recursive=True):
        if '/.curator/' in p:
            continue
        _, fm, body = open(p).read().split('---\n', 2)
        d = yaml.safe_load(fm)
        rel = os.path.relpath(p, memory_root).split(os.sep)
        d['tier'], d['scope'] = rel[0], rel[1]
        obs[d['id']] = d
    return obs
