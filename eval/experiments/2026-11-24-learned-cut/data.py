import json, re, collections
import os
EVAL=os.environ.get('EVAL_DIR', 'eval')
OUT=os.environ.get('OUT_DIR', '.')
def norm(s): return ' '.join(re.findall(r'\w+', s.lower()))
FEATS=['cov','tcov','units','nmatch','nknown','steplen','kshare','uniq','maxw','oovcov','rel','dtcov','dtlen','dclen','trust']
def load(split):
    qs=[json.loads(l) for l in open(f'{EVAL}/{split}/queries.jsonl') if l.strip()]
    cands=collections.defaultdict(dict); exact={}
    for l in open(f'{OUT}/{split}.feat'):
        if not l.startswith('{'): continue
        r=json.loads(l)
        key=(norm(r['q']), tuple(x for x in r['scopes'] if x.startswith('tests/')))
        if 'exact' in r: exact[key]=r['exact']; continue
        cands[key][r['id']]=r
    out=[]
    for q in qs:
        key=(norm(q['query']), ('tests/'+q['test'],))
        c=list(cands.get(key,{}).values())
        # add relative features
        if c:
            mr=max(x['rel'] for x in c)
            for x in c: x['relratio']=x['rel']/mr
            order=sorted(c,key=lambda x:-x['rel'])
            for i,x in enumerate(order): x['rank']=i
        out.append(dict(q=q, cands=c, exact=exact.get(key,[]), rel=set(q['relevant'])))
    return out
