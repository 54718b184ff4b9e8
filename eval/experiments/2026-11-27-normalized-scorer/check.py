import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from load import *
for s in ['train','dev']:
    D=load(s); bad=0
    for d in D:
        mine=current(d)
        if set(mine)!=set(d['acc']): bad+=1
    print(s, 'mismatch', bad, metrics(D, current))
