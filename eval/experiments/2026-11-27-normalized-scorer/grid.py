import sys, itertools; sys.path.insert(0,__import__('os').path.dirname(__file__))
from load import *
def scorer(f, r, tb=2.0, u=0.0, a=0.0):
    def fn(d):
        st=d['step']
        if not st or not st['terms']: return []
        terms=st['terms']; n=st['pool']
        analyzed = len(terms)/st['kshare'] if st['kshare']>0 else len(terms)
        unknown=max(0.0, analyzed-len(terms))
        denom=sum(t['w']*tb for t in terms) + u*unknown*idf1(n)*tb
        acc=[]
        for c in d['cands']:
            s=sum(t['w']*(tb if c['t']&t['bit'] else 1) for t in terms if c['a']&t['bit'])
            raw=sum(t['w'] for t in terms if c['a']&t['bit'])
            if s/denom>=f and raw>=a*idf1(n): acc.append((c['id'],s,c['trust']))
        return cut(acc,r)
    return fn
T=load('train'); V=load('dev')
print('current', metrics(T,current), metrics(V,current))
res=[]
for f,r,tb,u,a in itertools.product([0.3,0.4,0.5,0.55,0.6,0.65,0.7,0.75,0.8],[0.5,0.65,0.8],[1.5,2,3],[0,0.25,0.5],[0,0.5,0.8,1.0]):
    m=metrics(T,scorer(f,r,tb,u,a)); res.append((m,(f,r,tb,u,a)))
# frontier: for irr bins, best recall
for lim in [0.1,0.15,0.2,0.25,0.3,0.35]:
    ok=[x for x in res if x[0][1]<=lim]
    if ok:
        b=max(ok,key=lambda x:x[0][0]); print(lim, b, 'dev', metrics(V,scorer(*b[1])))
