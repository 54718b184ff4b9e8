import numpy as np, math
from data import *
from sklearn.linear_model import LogisticRegression
def X(c, feats):
    return [f(c) for f in feats]
BASE={
 'cov':lambda c:c['cov'],'tcov':lambda c:c['tcov'],'lunits':lambda c:math.log(c['units']+1e-3),
 'nmatch':lambda c:c['nmatch'],'kshare':lambda c:c['kshare'],'uniq':lambda c:float(c['uniq']),
 'maxw':lambda c:c['maxw'],'oovcov':lambda c:c['oovcov'],'relratio':lambda c:c['relratio'],
 'dtcov':lambda c:c['dtcov'],'rank0':lambda c:float(c['rank']==0),'lsteplen':lambda c:math.log(c['steplen']+1),
 'lnknown':lambda c:math.log(c['nknown']+1),'lpool':lambda c:math.log(c['pool']),
}
def fit(data, names, C=1.0):
    xs=[];ys=[]
    for d in data:
        for c in d['cands']:
            xs.append([BASE[n](c) for n in names]); ys.append(c['id'] in d['rel'])
    m=LogisticRegression(C=C,max_iter=2000).fit(np.array(xs),np.array(ys))
    return m
def score(m,names,data):
    for d in data:
        if d['cands']:
            p=m.predict_proba(np.array([[BASE[n](c) for n in names] for c in d['cands']]))[:,1]
            for c,pp in zip(d['cands'],p): c['p']=pp
def inject(d, th, cap):
    out=list(d['exact'][:cap])
    for c in sorted(d['cands'], key=lambda c:-c['p']):
        if len(out)>=cap: break
        if c['p']>=th and c['id'] not in out: out.append(c['id'])
    return out
def metrics(data, th, k=5, cap=3):
    rec=[]; irr=0; inj=0; nothing_inj=0; nn=0
    for d in data:
        if d['rel']:
            got=inject(d,th,k); rec.append(len(d['rel']&set(got))/len(d['rel']))
        else: nn+=1
        got=inject(d,th,cap); inj+=len(got); irr+=sum(1 for i in got if i not in d['rel'])
        if not d['rel'] and got: nothing_inj+=1
    return np.mean(rec), irr/max(inj,1), nothing_inj, nn
def add_emb(data, split):
    z=np.load(f'{OUT}/{split}.emb.npz')
    idx={i:k for k,i in enumerate(z['ids'])}
    qi={q:k for k,q in enumerate(z['qs'])}
    for d in data:
        qv=z['Q'][qi[d['q']['query']]]
        for c in d['cands']: c['cos']=float(z['E'][idx[c['id']]]@qv)
        if d['cands']:
            mx=max(c['cos'] for c in d['cands'])
            for c in d['cands']: c['cosgap']=mx-c['cos']
BASE['cos']=lambda c:c['cos']; BASE['cosgap']=lambda c:c['cosgap']
def inject2(d, th, r, cap):
    out=list(d['exact'][:cap])
    cs=sorted(d['cands'], key=lambda c:-c['p'])
    top=cs[0]['p'] if cs else 0
    for c in cs:
        if len(out)>=cap: break
        if c['p']>=th and c['p']>=r*top and c['id'] not in out: out.append(c['id'])
    return out
def metrics2(data, th, r, k=5, cap=3):
    rec=[]; irr=0; inj=0; nothing_inj=0
    for d in data:
        if d['rel']:
            got=inject2(d,th,r,k); rec.append(len(d['rel']&set(got))/len(d['rel']))
        got=inject2(d,th,r,cap); inj+=len(got); irr+=sum(1 for i in got if i not in d['rel'])
        if not d['rel'] and got: nothing_inj+=1
    return round(float(np.mean(rec)),3), round(irr/max(inj,1),3), nothing_inj
