#!/usr/bin/env bash
# Import an OCI image archive into the running node's containerd (namespace k8s.io, the one the kubelet uses).
# Usage: ./load-image.sh FILE.oci.tar NAME[:TAG]
#   -> localhost/NAME:TAG, for pods with `image: localhost/NAME:TAG` and imagePullPolicy Never or IfNotPresent.
# TAG defaults to the archive's own tag (index.json annotation org.opencontainers.image.ref.name, as umoci and
# scripts/images.sh write it), or `latest` when the archive has none. Prints the image reference.
# Env: REAL_NODE_ROOT (default ~/.cache/tbmq-real-node).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 FILE.oci.tar NAME[:TAG]" >&2; exit 2; }
FILE=$1; NAME=${2#localhost/}
R=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
SOCK=$R/containerd/containerd.sock
CTR=(ctr --address "$SOCK" -n k8s.io)
[ -f "$FILE" ] || { echo "error: $FILE not found" >&2; exit 1; }
"${CTR[@]}" version >/dev/null 2>&1 || { echo "error: the node's containerd ($SOCK) is not running: start.sh first" >&2; exit 1; }
TAG=""
if [[ "${NAME##*/}" == *:* ]]; then TAG=${NAME##*:}; NAME=${NAME%:*}; fi
BASE=localhost/$NAME

# the ref names the archive carries: a bare tag ("0.1.0") or a full reference ("docker.io/x/y:1")
INDEX=$(tar -xOf "$FILE" index.json 2>/dev/null || tar -xOf "$FILE" ./index.json 2>/dev/null) \
  || { echo "error: $FILE is not an OCI image layout archive (no index.json)" >&2; exit 1; }
REF=$(python3 -c 'import json,sys
m=json.loads(sys.argv[1]).get("manifests",[])
print(next((x.get("annotations",{}).get("org.opencontainers.image.ref.name","") for x in m if x.get("annotations",{}).get("org.opencontainers.image.ref.name")),""))' "$INDEX")

if [ -n "$REF" ] && [[ "$REF" != *[/:@]* ]]; then      # bare tag: import names it localhost/NAME:REF
  "${CTR[@]}" images import --base-name "$BASE" "$FILE" >/dev/null
  SRC=$BASE:$REF
elif [ -n "$REF" ]; then                                # full reference: import under it, then tag
  repo=${REF%@*}; [[ "${repo##*/}" == *:* ]] && repo=${repo%:*}
  "${CTR[@]}" images import --base-name "$repo" "$FILE" >/dev/null
  SRC=$REF
else                                                    # no name at all: name the index
  SRC=$BASE:${TAG:-latest}
  "${CTR[@]}" images import --index-name "$SRC" "$FILE" >/dev/null
fi
: "${TAG:=${SRC##*:}}"
DST=$BASE:$TAG
if [ "$SRC" != "$DST" ]; then
  "${CTR[@]}" images tag --force "$SRC" "$DST" >/dev/null
  [[ "$SRC" == localhost/* ]] || "${CTR[@]}" images rm "$SRC" >/dev/null
fi
names=$("${CTR[@]}" images ls -q)
grep -qxF "$DST" <<<"$names" || { echo "error: $DST not found after importing $FILE" >&2; exit 1; }
echo "$DST"
