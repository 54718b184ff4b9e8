"""Leave-one-product-out over eval/train + eval/dev: a logistic relevance model on terms-mode
candidate features (and, optionally, MiniLM cosine), cut by a probability floor and a ratio of
the best candidate's probability; figures as `curator eval --k 5` counts them."""
from sim import *
tr=load('train'); dv=load('dev'); add_emb(tr,'train'); add_emb(dv,'dev')
groups={}
for d in tr+dv: groups.setdefault(d['q']['product'],[]).append(d)
lex=[k for k in BASE if k not in ('cos','cosgap')]
for label,names in [('lexical features',lex),('lexical + MiniLM cosine',list(BASE))]:
    allte=[]
    for g in groups:
        trn=[d for k,v in groups.items() if k!=g for d in v]; te=groups[g]
        m=fit(trn,names); score(m,names,te); allte+=te
    for th in [0.2,0.3,0.4,0.5,0.6]:
        for r in [0,0.5]:
            print(f'| {label} | {th} | {r} | %.3f | %.1f %% | %d of 67 |' % (lambda x:(x[0],100*x[1],x[2]))(metrics2(allte,th,r)))
