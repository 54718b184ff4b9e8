import sys, re, math; sys.path.insert(0,__import__('os').path.dirname(__file__))
from load import *
import snowballstemmer
ST=snowballstemmer.stemmer('english')
STOP=set("""a about above after again against all also am an and any are as at be been before being below between both but by can could d did do does doing don down during each few for from further had has have having he her here hers him his how i if in into is it its itself just ll m me more most my no nor not now of off on once only or other our ours out over own re s same she should so some such t than that the their theirs them then there these they this those through to too under until up ve very was we were what when where which while who whom why will with would you your yours""".split())
FILL=set("click tap press verifi check ensur make sure go navig wait see look view display show visibl appear new one everi".split())
DICT=set(w.strip() for w in open('/usr/share/dict/american-english') if re.fullmatch(r'[a-z]+',w.strip()))
def fold(t): return t.lower()
def data_spans(q):
    spans=[]
    for m in re.finditer(r'https?://\S+|\S+@\S+|"[^"]*"|“[^”]*”|\S*\d\S*',q): spans.append(m.span())
    return spans
def content_oov(q, seen):
    """stems of the step's own words that the pool does not know and that are ordinary words"""
    spans=data_spans(q)
    oov={s for s,df in seen if df==0}
    out=set()
    for m in re.finditer(r'\w+',q):
        tok=m.group(0); lt=fold(tok)
        if lt in STOP: continue
        st=ST.stemWord(lt)
        if st in FILL or st not in oov: continue
        if any(a<=m.start()<b for a,b in spans): continue
        if lt.isalpha() and lt in DICT: out.add(st)
    return out
def idf(n,df): return math.log(1+(n-df+0.5)/(df+0.5))
def rules(u, min_cov=0.2, keep=0.65):
    def fn(d):
        st=d['step']
        if not st or not st['terms']: return []
        n=st['pool']
        co=content_oov(d['q']['query'], st['seen'])
        known=sum(t['w'] for t in st['terms'])
        denom=known+u*len(co)*idf(n,0)
        acc=[]
        for c in d['cands']:
            m=[(t, bool(c['t']&t['bit'])) for t in st['terms'] if c['a']&t['bit']]
            if not m: continue
            covered=sum(t['w'] for t,_ in m)
            cov=covered/known; pcov=covered/denom
            anyt=any(x for _,x in m)
            if len(m)==1:
                t,it=m[0]; ok= it and t['tdf']==1 and pcov>=0.7 and st['kshare']>=0.25
            else: ok= covered/idf1(n)>=0.8
            ok = ok and cov>=min_cov and (anyt or pcov>=0.7)
            rel=sum(t['w']*(TITLE_BOOST if it else 1) for t,it in m)
            if ok: acc.append((c['id'],rel,c['trust']))
        return cut(acc, keep)
    return fn
if __name__=='__main__':
    T=load('train'); V=load('dev')
    print('current', metrics(T,current), metrics(V,current))
    for u in [0,0.1,0.2,0.3,0.5,0.75,1.0]:
        print(u, metrics(T,rules(u)), metrics(V,rules(u)))
def rules2(u, f):
    base=rules(u)
    def fn(d):
        st=d['step']
        if not st or not st['terms']: return []
        n=st['pool']; co=content_oov(d['q']['query'], st['seen'])
        known=sum(t['w'] for t in st['terms']); denom=known+u*len(co)*idf(n,0)
        ids=base(d); out=[]
        cmap={c['id']:c for c in d['cands']}
        for i in ids:
            c=cmap[i]; covered=sum(t['w'] for t in st['terms'] if c['a']&t['bit'])
            if covered/denom>=f: out.append(i)
        return out
    return fn
