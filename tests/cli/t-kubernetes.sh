#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# deploy/kubernetes/: the manifests parse (python3-yaml), every field is one
# the Kubernetes API has, of its type (the python3-kubernetes models, the
# API's generated types: an unknown or misplaced key fails), the objects fit
# together (selectors, volumes, the script the DaemonSet runs), and
# `kubectl apply --dry-run=client` accepts them. kubectl wants a server even
# for a client dry run (discovery: which kinds exist); the test serves it a
# stand-in on 127.0.0.1 that knows the kinds used and has no objects, with
# --validate=false (the schema is the models' check). Then the two scripts
# the manifests carry run here: the DaemonSet's loop on a made-up kubelet
# tree (its snapshot, its push), and the init container's pull and restore
# (pull through a stand-in that copies the DaemonSet's snapshot).
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
K=$REPO/deploy/kubernetes
cd "$T_DIR"

# the distribution's python (python3-yaml, python3-kubernetes), not a
# virtualenv's first on PATH
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import yaml' 2>/dev/null; then
	t_skip "the Kubernetes manifests" "no python3-yaml (make test-deps)"
	t_done; exit
fi
mapfile -t files < <(cd "$K" && ls -- *.yaml)
t_is "the manifests" "${files[*]}" "daemonset-snapshot.yaml statefulset-restore.yaml"

cat >check.py <<'PY'
# one line per check: NAME<TAB>PROBLEM (empty: none) or NAME<TAB>SKIP<TAB>WHY
import os, re, shlex, sys, yaml

out = []
def check(name, problem=""):
    out.append((name, problem))

docs = {}
for f in sys.argv[2:]:
    try:
        with open(os.path.join(sys.argv[1], f)) as fh:
            ds = [d for d in yaml.safe_load_all(fh) if d is not None]
        check("%s is YAML" % f)
    except yaml.YAMLError as e:
        check("%s is YAML" % f, str(e).replace("\n", " "))
        continue
    for d in ds:
        missing = [k for k in ("apiVersion", "kind", "metadata") if k not in d]
        name = (d.get("metadata") or {}).get("name")
        check("%s: %s %s has apiVersion, kind, metadata.name" % (f, d.get("kind"), name),
              " ".join(missing) if missing or not name else "")
        docs.setdefault(f, []).append(d)

# every field, against the API's generated types
try:
    import kubernetes.client as kc
except ImportError:
    kc = None
def walk(obj, typ, path, errs):
    if obj is None:
        return
    m = re.match(r"list\[(.*)\]$", typ)
    if m:
        if not isinstance(obj, list):
            errs.append("%s: a list, not %r" % (path, obj))
        else:
            for i, o in enumerate(obj):
                walk(o, m.group(1), "%s[%d]" % (path, i), errs)
        return
    m = re.match(r"dict\(([^,]*), (.*)\)$", typ)
    if m:
        if not isinstance(obj, dict):
            errs.append("%s: a map, not %r" % (path, obj))
        else:
            for k, o in obj.items():
                walk(o, m.group(2), "%s.%s" % (path, k), errs)
        return
    scalar = {"str": str, "bool": bool, "float": (int, float), "datetime": str, "date": str}
    if typ == "object":
        return
    if typ == "int":
        if not isinstance(obj, int) or isinstance(obj, bool):
            errs.append("%s: an integer, not %r" % (path, obj))
        return
    if typ in scalar:
        if not isinstance(obj, scalar[typ]) or (typ != "bool" and isinstance(obj, bool)):
            errs.append("%s: %s, not %r" % (path, typ, obj))
        return
    cls = getattr(kc, typ, None)
    if cls is None:
        errs.append("%s: unknown type %s" % (path, typ))
        return
    if not isinstance(obj, dict):
        errs.append("%s: an object (%s), not %r" % (path, typ, obj))
        return
    keys = {v: k for k, v in cls.attribute_map.items()}
    for k, o in obj.items():
        if k not in keys:
            errs.append("%s: no field %r in %s" % (path, k, typ))
        else:
            walk(o, cls.openapi_types[keys[k]], "%s.%s" % (path, k), errs)

for f, ds in docs.items():
    for d in ds:
        what = "%s: %s %s" % (f, d.get("kind"), d["metadata"].get("name"))
        if kc is None:
            check(what + ": every field is the API's", "SKIP\tno python3-kubernetes (make test-deps)")
            continue
        version = d["apiVersion"].split("/")[-1]
        typ = version[0].upper() + version[1:] + d["kind"]
        errs = []
        if getattr(kc, typ, None) is None:
            errs.append("no kind %s in %s" % (d["kind"], d["apiVersion"]))
        else:
            walk(d, typ, d["kind"], errs)
        check(what + ": every field is the API's, of its type", "; ".join(errs))

def objs(kind):
    return [(f, d) for f, ds in docs.items() for d in ds if d["kind"] == kind]
def subset(a, b):
    return all(b.get(k) == v for k, v in (a or {}).items())

sts = objs("StatefulSet")
dss = objs("DaemonSet")
check("one StatefulSet and one DaemonSet", "" if len(sts) == 1 and len(dss) == 1 else "%d, %d" % (len(sts), len(dss)))
for f, w in sts + dss:
    spec = w["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"].get("labels")
    what = "%s %s" % (w["kind"], w["metadata"]["name"])
    check(what + ": its selector matches its pods", "" if subset(spec["selector"]["matchLabels"], labels) else "no")
    vols = {v["name"] for v in pod.get("volumes", [])} | \
           {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
    bad = ["%s:%s" % (c["name"], m["name"]) for c in pod.get("initContainers", []) + pod["containers"]
           for m in c.get("volumeMounts", []) if m["name"] not in vols]
    check(what + ": every volume mounted is declared", " ".join(bad))
    for c in pod.get("initContainers", []) + pod["containers"]:
        if "pagecache" not in c["image"]:
            continue
        sc = c.get("securityContext", {})
        caps = sc.get("capabilities", {})
        check("%s: %s drops every capability but DAC_READ_SEARCH and FOWNER" % (what, c["name"]),
              "" if caps.get("drop") == ["ALL"] and set(caps.get("add", [])) <= {"DAC_READ_SEARCH", "FOWNER"}
              else repr(caps))
        check("%s: %s cannot gain privileges, nor write its image" % (what, c["name"]),
              "" if sc.get("allowPrivilegeEscalation") is False and sc.get("readOnlyRootFilesystem") is True
              and not sc.get("privileged") else repr(sc))
        check("%s: %s has a memory limit" % (what, c["name"]),
              "" if c.get("resources", {}).get("limits", {}).get("memory") else "none")

scripts = {}
if sts:
    f, s = sts[0]
    pod = s["spec"]["template"]["spec"]
    svc = [d for _, d in objs("Service") if d["metadata"]["name"] == s["spec"]["serviceName"]]
    check("the StatefulSet's serviceName is a Service here, selecting its pods",
          "" if svc and subset(svc[0]["spec"]["selector"], s["spec"]["template"]["metadata"]["labels"]) else "no")
    init = [c for c in pod.get("initContainers", []) if c["name"] == "pagecache-restore"]
    check("the StatefulSet's pods restore in an init container", "" if init else "none")
    if init:
        ic, db = init[0], pod["containers"][0]
        env = {e["name"]: e.get("value") for e in ic.get("env", [])}
        imount = {m["name"]: m for m in ic["volumeMounts"]}
        dmount = {m["name"]: m for m in db["volumeMounts"]}
        data = [n for n in imount if n in dmount]
        check("the init container mounts the database's volume where the database does, read-only",
              "" if data and all(imount[n]["mountPath"] == dmount[n]["mountPath"] and imount[n].get("readOnly")
                                 for n in data) else repr(imount))
        check("and restores beneath it (DATA_DIR)",
              "" if data and env.get("DATA_DIR") == dmount[data[0]]["mountPath"] else repr(env.get("DATA_DIR")))
        check("its command is sh -c SCRIPT", "" if ic["command"] == ["/bin/sh", "-c"] and len(ic["args"]) == 1 else repr(ic["command"]))
        scripts["init.sh"] = ic["args"][0]
        scripts["init.env"] = "".join("%s=%s\n" % (k, shlex.quote(v)) for k, v in env.items() if v is not None)
        check("the init container's limit holds its budget",
              "" if re.fullmatch(r"[0-9]+M", env.get("PAGECACHE_MAX_MEM") or "") and
              ic["resources"]["limits"]["memory"].endswith("Gi") and
              int(env["PAGECACHE_MAX_MEM"][:-1]) < 1024 * int(ic["resources"]["limits"]["memory"][:-2])
              else repr(env.get("PAGECACHE_MAX_MEM")))
if dss:
    f, d = dss[0]
    pod = d["spec"]["template"]["spec"]
    c = pod["containers"][0]
    check("the DaemonSet needs no host PID namespace, network or API token",
          "" if not pod.get("hostPID") and not pod.get("hostNetwork") and pod.get("automountServiceAccountToken") is False
          else "hostPID=%r hostNetwork=%r" % (pod.get("hostPID"), pod.get("hostNetwork")))
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    k = mounts.get("/var/lib/kubelet", {})
    check("it mounts the host's /var/lib/kubelet read-only, seeing later mounts",
          "" if k.get("readOnly") and k.get("mountPropagation") == "HostToContainer" else repr(k))
    check("and /var/log/pods read-only", "" if mounts.get("/var/log/pods", {}).get("readOnly") else "no")
    vols = {v["name"]: v for v in pod["volumes"]}
    script = c["command"][-1]
    cm = None
    for path, m in mounts.items():
        src = vols[m["name"]].get("configMap")
        if src and script.startswith(path + "/"):
            cms = [x for _, x in objs("ConfigMap") if x["metadata"]["name"] == src["name"]
                   and x["metadata"].get("namespace") == d["metadata"].get("namespace")]
            if cms:
                cm = cms[0]["data"].get(script[len(path) + 1:])
    check("it runs the script of its ConfigMap", "" if cm else "%s is in no ConfigMap here" % script)
    if cm:
        scripts["pods.sh"] = cm
        scripts["pods.env"] = "".join("%s=%s\n" % (e["name"], shlex.quote(e["value"])) for e in c.get("env", []))

for name, text in scripts.items():
    with open(name, "w") as fh:
        fh.write(text)
for name, problem in out:
    print("%s\t%s" % (name, problem))
PY
"$PY" check.py "$K" "${files[@]}" >checks 2>check.err
t_is "the manifests' checker runs" "$?:$(head -c 300 check.err)" "0:"
while IFS=$'\t' read -r name problem why; do
	if [ "$problem" = SKIP ]; then t_skip "$name" "$why"
	else t_is "$name" "$problem" ""; fi
done <checks

# kubectl apply --dry-run=client, against a stand-in for discovery
if ! t_have kubectl; then
	t_skip "kubectl apply --dry-run=client accepts the manifests" "$T_WHY"
else
	cat >fakeapi.py <<'PY'
# discovery for the kinds the manifests use, and no objects (404): what
# kubectl apply --dry-run=client asks of a server
import http.server, json, sys
CORE = {"Service": "services", "ConfigMap": "configmaps", "Namespace": "namespaces"}
APPS = {"StatefulSet": "statefulsets", "DaemonSet": "daemonsets"}
def rl(gv, kinds):
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
        {"name": p, "singularName": k.lower(), "namespaced": k != "Namespace", "kind": k,
         "verbs": ["create", "get", "list", "patch"]} for k, p in kinds.items()]}
R = {"/api": {"kind": "APIVersions", "versions": ["v1"]},
     "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [{"name": "apps",
               "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
               "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]},
     "/api/v1": rl("v1", CORE), "/apis/apps/v1": rl("apps/v1", APPS),
     "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"}}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        sys.stderr.write("%s %s\n" % (self.command, self.path))
    def reply(self, code, body):
        b = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_GET(self):
        p = self.path.split("?")[0]
        if p in R:
            self.reply(200, R[p])
        else:
            self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                             "reason": "NotFound", "code": 404})
    def do_POST(self):	# a dry run writes nothing: a write is a failure
        self.reply(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403})
    do_PUT = do_PATCH = do_DELETE = do_POST
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
	"$PY" fakeapi.py >api.port 2>api.log &
	api=$!
	T_CLEANUP+=("t_kill $api")
	t_wait 10 test -s api.port
	port=$(cat api.port)
	for f in "${files[@]}"; do
		want=$("$PY" -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    g = d["apiVersion"].split("/")[0] if "/" in d["apiVersion"] else ""
    print("%s%s/%s created (dry run)" % (d["kind"].lower(), "." + g if g else "", d["metadata"]["name"]))' "$K/$f")
		got=$(KUBECONFIG=/dev/null timeout 60 kubectl apply --dry-run=client --validate=false \
			-s "http://127.0.0.1:$port" -f "$K/$f" 2>kubectl.err)
		t_is "kubectl apply --dry-run=client accepts $f" "$got$(head -c 300 kubectl.err)" "$want"
	done
	t_is "and writes nothing" "$(grep -vc '^GET ' api.log)" 0
	# the stand-in can refuse: a kind the API lacks
	sed 's/^kind: StatefulSet$/kind: StatefullSet/' "$K/statefulset-restore.yaml" >typo.yaml
	KUBECONFIG=/dev/null timeout 60 kubectl apply --dry-run=client --validate=false \
		-s "http://127.0.0.1:$port" -f typo.yaml >/dev/null 2>kubectl.err
	t_is "kubectl refuses a kind the API lacks" "$?:$(grep -c 'no matches for kind "StatefullSet"' kubectl.err)" 1:1
	t_kill "$api"
fi
# the schema check can fail: a misplaced key, a string for a number
mkdir -p bad
sed 's/^      initContainers:$/      initContainer:/; s/^  replicas: 1$/  replicas: "1"/' "$K/statefulset-restore.yaml" >bad/statefulset-restore.yaml
if "$PY" -c 'import kubernetes' 2>/dev/null; then
	"$PY" check.py bad statefulset-restore.yaml 2>/dev/null | grep 'every field' >bad.checks
	t_ok "the checker names a key the API lacks" grep -q "no field 'initContainer' in V1PodSpec" bad.checks
	t_ok "and a string for a number" grep -q "replicas: an integer, not '1'" bad.checks
else
	t_skip "the checker fails a broken manifest" "no python3-kubernetes (make test-deps)"
fi

# the DaemonSet's loop, one round on a made-up kubelet tree: two pods, one
# selected; its paths relative to the volume; the push names the pod
if [ ! -s pods.sh ]; then
	t_skip "the DaemonSet's script" "no script was found in its ConfigMap"
	t_done; exit
fi
uid1=11111111-2222-3333-4444-555555555555 uid2=66666666-7777-8888-9999-000000000000
v1=kubelet/pods/$uid1/volumes/kubernetes.io~csi/pvc-1/mount
v2=kubelet/pods/$uid2/volumes/kubernetes.io~csi/pvc-2/mount
mkdir -p "$v1/db" "$v2" "logs/default_db-0_$uid1" "logs/default_web-0_$uid2" bin
mkfile "$v1/db/ibdata1" 512
mkfile "$v1/db/t1.ibd" 256
mkfile "$v2/other" 64
cat "$v1/db/ibdata1" "$v1/db/t1.ibd" "$v2/other" >/dev/null
# a pagecache that logs push and pull (the registry is another test's) and
# runs everything else; pull copies what the DaemonSet wrote to -o's FILE,
# or, with STUB_PULL=real, is the real one
cat >bin/pagecache <<EOF
#!/bin/sh
case "\$1" in
push) echo "\$*" >>"$T_DIR/push.log"; exit 0 ;;
pull) [ -n "\${STUB_PULL:-}" ] && exec "$PAGECACHE" "\$@"
	echo "\$*" >>"$T_DIR/pull.log"; [ -f "\${STUB_SNAP:-}" ] || exit 1
	while [ \$# -gt 1 ] && [ "\$1" != -o ]; do shift; done; cp "\$STUB_SNAP" "\$2" ;;
*) exec "$PAGECACHE" "\$@" ;;
esac
EOF
chmod +x bin/pagecache
guard=0.1
pc --list-options snapshot 2>/dev/null | grep -q -- --guard || guard=
# the manifest's env, then this tree's places
(set -a; . ./pods.env; PAGECACHE=$T_DIR/bin/pagecache KUBELET_DIR=$T_DIR/kubelet POD_LOG_DIR=$T_DIR/logs \
	SNAP_DIR=$T_DIR/snaps GUARD=$guard PAGECACHE_REGISTRY=reg.test/snaps ONCE=1 sh pods.sh) >pods.out 2>pods.err
t_is "one round of the DaemonSet's script exits 0" "$?:$(head -c 300 pods.err)" "0:"
t_is "it snapshots the selected pod only" "$(cd snaps 2>/dev/null && ls | xargs)" default_db-0.snap
pc show --json snaps/default_db-0.snap >show.json 2>/dev/null
t_is "the volume's files, relative to it" "$(jq -r '[.files[].path] | sort | join(" ")' show.json)" "db/ibdata1 db/t1.ibd"
t_is "and pushes it where the init container pulls it" "$(cat push.log 2>/dev/null)" \
	"push --timeout 60 $T_DIR/snaps/default_db-0.snap reg.test/snaps/default-db-0:latest"

# a round while the pod's cache is gone keeps the last good snapshot
if [ -z "$guard" ]; then
	t_skip "the DaemonSet's script keeps the last good snapshot" "this pagecache has no snapshot --guard yet"
else
	drop "$v1/db/ibdata1" "$v1/db/t1.ibd"
	(set -a; . ./pods.env; PAGECACHE=$T_DIR/bin/pagecache KUBELET_DIR=$T_DIR/kubelet POD_LOG_DIR=$T_DIR/logs \
		SNAP_DIR=$T_DIR/snaps GUARD=$guard ONCE=1 sh pods.sh) >pods.out 2>pods.err
	t_is "the DaemonSet's script keeps the last good snapshot when the pod's cache is gone" \
		"$(pc show --json snaps/default_db-0.snap 2>/dev/null | jq -r '[.files[].path] | sort | join(" ")')" \
		"db/ibdata1 db/t1.ibd"
fi

# the init container: pull, then restore beneath the volume as the new pod
# mounts it (a copy, as on another node: same files, same mtimes)
if ! t_root; then
	t_skip "the init container's restore" "not root: fincore counts truly only as root"
	t_done; exit
elif ! t_have fincore; then
	t_skip "the init container's restore" "$T_WHY"
	t_done; exit
fi
mkdir -p replica cache
cp -a "$v1/db" replica/
w1=$(jq -r '.files[] | select(.path == "db/ibdata1") | .pages' show.json)
w2=$(jq -r '.files[] | select(.path == "db/t1.ibd") | .pages' show.json)
drop replica/db/ibdata1 replica/db/t1.ibd
(set -a; . ./init.env; POD_NAME=db-0 POD_NAMESPACE=default PAGECACHE_REGISTRY=reg.test/snaps DATA_DIR=$T_DIR/replica \
	SNAPSHOT=$T_DIR/cache/db.snap STUB_SNAP=$T_DIR/snaps/default_db-0.snap PATH=$T_DIR/bin:$PATH sh init.sh) >init.out 2>init.err
t_is "the init container's script exits 0" "$?:$(head -c 300 init.err)" "0:"
t_is "it pulls this pod's snapshot, within PAGECACHE_TIMEOUT" "$(cat pull.log)" \
	"pull --timeout 300 reg.test/snaps/default-db-0:latest -o $T_DIR/cache/db.snap"
t_is "and restores it beneath the volume" \
	"$(resident_pages replica/db/ibdata1 "$w1") $(resident_pages replica/db/t1.ibd "$w2")" "$w1 $w2"
(set -a; . ./init.env; POD_NAME=db-1 POD_NAMESPACE=default PAGECACHE_REGISTRY=reg.test/snaps DATA_DIR=$T_DIR/replica \
	SNAPSHOT=$T_DIR/cache/db1.snap STUB_SNAP=$T_DIR/none PATH=$T_DIR/bin:$PATH sh init.sh) >init.out 2>init.err
t_is "without a snapshot, it exits 0 all the same" "$?" 0
t_ok "saying the database starts cold" grep -q "no snapshot at reg.test/snaps/default-db-1:latest: starting cold" init.err

# a registry that stalls: the real pull, its skopeo (a stand-in) answering
# one byte a second forever; PAGECACHE_TIMEOUT=2, so the database starts cold
# in seconds (not never: under timeout, a pull that waits fails here)
mkdir -m 700 fake
cat >fake/skopeo <<EOF
#!/bin/sh
echo \$\$ >"$T_DIR/fake/started"
while :; do printf '{'; sleep 1; done
EOF
chmod 755 fake/skopeo
(set -a; . ./init.env; POD_NAME=db-2 POD_NAMESPACE=default PAGECACHE_REGISTRY=127.0.0.1:9/snaps \
	DATA_DIR=$T_DIR/replica SNAPSHOT=$T_DIR/cache/db2.snap PAGECACHE_TIMEOUT=2 STUB_PULL=real \
	PAGECACHE_SKOPEO=$T_DIR/fake/skopeo PATH=$T_DIR/bin:$PATH timeout -k 5 30 sh init.sh) >init.out 2>init.err
t_is "a registry that stalls: the init container's script exits 0, by itself" "$?" 0
t_ok "  the pull timed out" grep -q "timed out: skopeo inspect had not finished when --timeout 2 s" init.err
t_ok "  and the database starts cold" grep -q "no snapshot at 127.0.0.1:9/snaps/default-db-2:latest: starting cold" init.err
t_wait 5 t_gone "$(cat fake/started)"
t_ok "  skopeo is gone" t_gone "$(cat fake/started)"
t_ok "  no snapshot written" test ! -e cache/db2.snap
t_done
