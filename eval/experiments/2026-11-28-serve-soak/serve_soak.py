import json, os, random, sys, time, urllib.request, uuid
BASE = sys.argv[1]; PID = int(sys.argv[2]); DURATION = float(sys.argv[3])
random.seed(7)
PRODUCT = "acme-shop"; TEST = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel"
WORDS = "sign in login cart basket pay payment card checkout order history account menu profile address search filter product page modal dialog save delete remove upload export invoice coupon shipping".split()
def req(method, path, body=None, ok=(200, 201, 204, 404, 409)):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(BASE + path, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=60) as resp:
            raw = resp.read(); st = resp.status
    except urllib.error.HTTPError as e:
        raw = e.read(); st = e.code
    if st not in ok:
        print("UNEXPECTED", method, path, st, raw[:300], flush=True)
    try: return st, json.loads(raw) if raw else None
    except Exception: return st, None
def sample():
    st = open(f"/proc/{PID}/status").read()
    rss = [l for l in st.splitlines() if l.startswith("VmRSS")][0].split()[1]
    thr = [l for l in st.splitlines() if l.startswith("Threads")][0].split()[1]
    fds = len(os.listdir(f"/proc/{PID}/fd"))
    maps = sum(1 for _ in open(f"/proc/{PID}/maps"))
    return int(rss), int(thr), fds, maps
def phrase(n): return " ".join(random.choice(WORDS) for _ in range(n))
start = time.time(); last = 0; it = 0; lat = []
created = []
while time.time() - start < DURATION:
    it += 1
    run = f"soak-{uuid.uuid4().hex[:12]}"
    req("POST", "/api/v1/runs", {"run_id": run})
    steps = []
    for i in range(5):
        t0 = time.time()
        st, ans = req("POST", f"/api/v1/runs/{run}/steps/{i}/query", {"product": PRODUCT, "test": TEST, "step_text": phrase(4)})
        lat.append(time.time() - t0)
        ids = [h["id"] for h in ans.get("observations", [])] if isinstance(ans, dict) else []
        steps.append({"name": phrase(3), "status": "passed", "injected": ids})
    failed = random.random() < 0.3
    if failed:
        steps[-1]["status"] = "failed"; steps[-1]["error"] = "Timed out"; steps[-1]["observation"] = "MEMO: " + phrase(8)
    rec = {"run_id": run, "product": PRODUCT, "test": {"id": TEST, "name": "soak", "file": "t.yaml"}, "status": "failed" if failed else "passed", "steps": steps}
    req("POST", f"/api/v1/runs/{run}/finish", {"run_record": rec})
    if it % 3 == 0:
        st, ans = req("POST", "/api/v1/observations", {"tier": "product", "scope": PRODUCT, "title": phrase(5), "content": phrase(20), "source_test": TEST})
        if isinstance(ans, dict) and "id" in ans: created.append(ans["id"])
    if it % 7 == 0 and created:
        req("DELETE", f"/api/v1/observations/{created.pop(0)}", {"reasoning": "soak"})
    if it % 5 == 0:
        st, pend = req("GET", "/api/v1/pending")
        items = pend.get("pending", pend.get("items", [])) if isinstance(pend, dict) else (pend or [])
        for p in items[:2]:
            req("POST", f"/api/v1/pending/{p['id']}/approve" if random.random() < 0.5 else f"/api/v1/pending/{p['id']}/reject", {"reasoning": "soak"})
        req("GET", "/"); req("GET", "/api/v1/changes"); req("GET", "/api/v1/lint"); req("GET", "/api/v1/journal?limit=50")
    time.sleep(0.02)
    if time.time() - last > 30:
        last = time.time()
        lat.sort(); p50 = lat[len(lat)//2]*1000 if lat else 0; p99 = lat[int(len(lat)*.99)]*1000 if lat else 0
        rss, thr, fds, maps = sample()
        print(f"t={time.time()-start:6.0f}s it={it} rss={rss}kB threads={thr} fds={fds} maps={maps} q_p50={p50:.1f}ms q_p99={p99:.1f}ms", flush=True)
        lat = []
