# Shared by scripts/images.sh (the images a cluster needs, pushed to your registry) and
# test/images/build.sh (the test images): image builds without Docker. The kaniko executor is compiled
# from source, laid out as the official image, and run in a plain runc container from that root
# filesystem (kaniko unpacks each base image over its own root, never the host's), with its own pid,
# mount, uts and ipc namespaces, the host network, no new privileges and the default container
# capabilities. Needs root, go, umoci, runc and jq. Source it; it defines functions only.

# oci_new DIR TAG: an empty OCI layout DIR/layout with image TAG, unpacked to DIR/bundle (fill DIR/bundle/rootfs).
oci_new() {
  rm -rf "$1" && mkdir -p "$1"
  umoci init --layout "$1/layout"
  umoci new --image "$1/layout:$2"
  umoci unpack --image "$1/layout:$2" "$1/bundle" >/dev/null
}
# oci_finish DIR TAG DEST [umoci config flags...]: one layer from DIR/bundle/rootfs, the config, the layout moved to DEST.
oci_finish() {
  local d=$1 tag=$2 dest=$3
  shift 3
  umoci repack --image "$d/layout:$tag" "$d/bundle"
  umoci config --image "$d/layout:$tag" --os linux --architecture amd64 --author sless "$@"
  umoci gc --layout "$d/layout"
  rm -rf "$dest.partial" && mv "$d/layout" "$dest.partial" && rm -rf "$dest" && mv "$dest.partial" "$dest"
  rm -rf "$d"
}

# kaniko_executor SOURCE OUT: compiles kaniko's executor to OUT. SOURCE is go:MODULE@VERSION (from the
# Go module proxy) or git:URL@REF (a clone; for forks whose go.mod keeps the upstream module path).
kaniko_executor() {
  local source=$1 out=$2 dir
  case $source in
    go:*)
      dir=$(GOFLAGS=-mod=mod go mod download -json "${source#go:}" | jq -r .Dir)
      [ -d "$dir" ] || { echo "kaniko: go mod download ${source#go:} failed" >&2; return 1; } ;;
    git:*)
      local url=${source#git:}
      dir=$(mktemp -d "${TMPDIR:-/tmp}/kaniko-src.XXXXXX")
      git clone -q --depth 1 --branch "${url##*@}" "${url%@*}" "$dir" ;;
    *) echo "kaniko: source must be go:MODULE@VERSION or git:URL@REF, not $source" >&2; return 1 ;;
  esac
  (cd "$dir" && GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags='-s -w' -o "$out" ./cmd/executor)
}

# kaniko_rootfs ROOT EXECUTOR: the official kaniko image's layout (/kaniko/executor, CA bundle, DOCKER_CONFIG).
kaniko_rootfs() {
  mkdir -p "$1/kaniko/ssl/certs" "$1/kaniko/.docker" "$1/workspace" "$1/etc"
  cp "$2" "$1/kaniko/executor"
  cp /etc/ssl/certs/ca-certificates.crt "$1/kaniko/ssl/certs/ca-certificates.crt"
  echo 'hosts: files dns' >"$1/etc/nsswitch.conf"
}
KANIKO_CONFIG=(--config.env PATH=/usr/local/bin:/kaniko --config.env HOME=/root --config.env USER=root
  --config.env SSL_CERT_DIR=/kaniko/ssl/certs --config.env DOCKER_CONFIG=/kaniko/.docker/
  --config.entrypoint /kaniko/executor --config.workingdir /workspace)

# kaniko_runc LAYOUT:TAG WORKDIR CONTEXT [MOUNT=SRC:DST[:rw]]... -- EXECUTOR-ARGS...: runs the executor from the
# kaniko image LAYOUT:TAG in runc, CONTEXT read-only at /workspace, WORKDIR/out at /out; its log is WORKDIR/kaniko.log.
kaniko_runc() {
  local image=$1 b=$2 ctx=$3 mounts='[]'
  shift 3
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
    local spec=${1#MOUNT=} mode=ro
    case $spec in *:rw) mode=rw; spec=${spec%:rw} ;; esac
    mounts=$(jq --arg s "${spec%%:*}" --arg d "${spec#*:}" --arg m "$mode" '. + [{destination:$d, type:"bind", source:$s, options:["rbind",$m]}]' <<<"$mounts")
    shift
  done
  shift
  rm -rf "$b" && mkdir -p "$b/out"
  umoci unpack --image "$image" "$b/bundle" >/dev/null
  jq --argjson args "$(printf '%s\n' /kaniko/executor "$@" | jq -R . | jq -s .)" --arg ctx "$ctx" --arg out "$b/out" --argjson extra "$mounts" '
    .process.args = $args | .process.terminal = false | .process.cwd = "/workspace" |
    .process.capabilities = ( ["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_SETGID","CAP_SETUID",
        "CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_MKNOD","CAP_AUDIT_WRITE","CAP_SETFCAP"] as $c
        | {bounding:$c, effective:$c, permitted:$c}) |
    .process.noNewPrivileges = true | .root.readonly = false |
    .linux.namespaces |= map(select(.type != "network" and .type != "user")) |
    .linux.uidMappings = [] | .linux.gidMappings = [] |
    .mounts += [
      {destination:"/workspace", type:"bind", source:$ctx, options:["rbind","ro"]},
      {destination:"/out", type:"bind", source:$out, options:["rbind","rw"]},
      {destination:"/etc/resolv.conf", type:"bind", source:"/etc/resolv.conf", options:["rbind","ro"]}
    ] + $extra' "$b/bundle/config.json" >"$b/config.json" && mv "$b/config.json" "$b/bundle/config.json"
  runc run --bundle "$b/bundle" "sless-kaniko-$$-$RANDOM" >"$b/kaniko.log" 2>&1
}
