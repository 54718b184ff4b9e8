import json, math, re
def norm(s): return ' '.join(re.findall(r'\w+', s.lower()))
def load(split):
    qs=[json.loads(l) for l in open(f'eval/{split}/queries.jsonl') if l.strip()]
    recs=[]
    for l in open(f"{__import__('os').environ.get('FEAT_DIR','.')}/{split}.feat"):
        if l.startswith('EXACT '): recs.append({'exact':json.loads(l[6:]),'feat':None})
        elif l.startswith('FEAT '): recs[-1]['feat']=json.loads(l[5:])
    assert len(recs)==2*len(qs), (len(recs),len(qs))
    out=[]
    for q,r in zip(qs,recs[0::2]):
        assert norm(r['exact']['q'])==norm(q['query']) or True
        f=r['feat']
        d=dict(q=q, rel=set(q['relevant']), exact=r['exact']['exact'], step=f['step'] if f else None,
               cands=f['cands'] if f else [], acc=f['acc'] if f else [])
        out.append(d)
    return out
TITLE_BOOST=2.0
def idf1(n): return math.log(1+(n-1+0.5)/(1+0.5))
def current(d, min_cov=0.2, keep=0.65):
    """replicate relevance::accept"""
    st=d['step']
    if not st or not st['terms']: return []
    known=sum(t['w'] for t in st['terms'])
    acc=[]
    for c in d['cands']:
        m=[(t, bool(c['t']&t['bit'])) for t in st['terms'] if c['a']&t['bit']]
        if not m: continue
        cov=sum(t['w'] for t,_ in m)/known
        anyt=any(x for _,x in m)
        if len(m)==1:
            t,it=m[0]; ok= it and t['tdf']==1 and cov>=0.7 and st['kshare']>=0.25
        else: ok= sum(t['w'] for t,_ in m)/idf1(st['pool'])>=0.8
        ok = ok and cov>=min_cov and (anyt or cov>=0.7)
        rel=sum(t['w']*(TITLE_BOOST if it else 1) for t,it in m)
        if ok: acc.append((c['id'],rel,c['trust']))
    return cut(acc, keep)
def cut(acc, keep):
    if not acc: return []
    best=max(r*math.sqrt(max(tr,0)) for _,r,tr in acc)
    acc=[a for a in acc if a[1]*math.sqrt(max(a[2],0))>=best*keep]
    acc.sort(key=lambda a:-a[1]*a[2])  # stable
    return [a[0] for a in acc]
def inject(d, ranked, cap):
    out=list(d['exact'][:cap])
    for i in ranked:
        if len(out)>=cap: break
        if i not in out: out.append(i)
    return out
def metrics(data, rank_fn, k=5, cap=3, classes=False):
    rec=[]; irr=0; inj=0; ninj=0; nn=0
    percls={}
    for d in data:
        r=rank_fn(d)
        got5=inject(d,r,k); got3=inject(d,r,cap)
        i3=sum(1 for i in got3 if i not in d['rel'])
        if d['rel']: rec.append(len(d['rel']&set(got5))/len(d['rel']))
        else:
            nn+=1; ninj+= bool(got3)
        irr+=i3; inj+=len(got3)
    return round(sum(rec)/len(rec),3), round(irr/max(inj,1),3), f'{ninj}/{nn}'
