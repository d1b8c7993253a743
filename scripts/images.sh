#!/usr/bin/env bash
# Builds every image a cluster needs and pushes it to your registry, then prints the settings to use:
#
#   scripts/images.sh --registry HOST[:PORT]/PREFIX [--insecure] [--base KEY=IMAGE]... [--ca-file FILE]
#
#   kaniko                     the builder, compiled from the pinned fork's source        -> PREFIX/kaniko:<version>
#   sless-build-tools          runtimes/build-tools/Dockerfile                            -> PREFIX/sless-build-tools:<tag>
#   sless-runtime-<runtime>    runtimes/<runtime>/Dockerfile (python3.11 python3.12       -> PREFIX/sless-runtime-<runtime>:<tag>
#                              nodejs20 nodejs22 go1.23)
#   sless-controller           deploy/Dockerfile                                          -> PREFIX/sless-controller:<version>
#
# The tags are the ones the controller expects (src/build/runtime-catalog.ts). No Docker: that kaniko
# builds the others, run in runc from its own root filesystem (scripts/lib/kaniko-runc.sh), and pushes
# them itself. Run as root on Linux with go, umoci, runc, skopeo, jq and git (Debian: golang umoci runc
# skopeo jq git) and Node.js >= 22.19 with `npm ci` done (for the image names).
#
# Options:
#   --registry HOST[:PORT]/PREFIX  where the images go (required)
#   --insecure                     the registry speaks plain HTTP (loopback and private addresses do anyway)
#   --base KEY=IMAGE               a base image instead of the Dockerfile's upstream one (a mirror, or no
#                                  Docker Hub): KEY is a runtime (python3.11 ...), build-tools (its Go image)
#                                  or controller (its Node 22 image); repeat per KEY
#   --kaniko-source SOURCE         go:MODULE@VERSION (Go module proxy) or git:URL@REF; default
#                                  git:https://github.com/osscontainertools/kaniko@v1.28.3 (the fork
#                                  behind the default SLESS_KANIKO_IMAGE, martizih/kaniko:v1.28.3)
#   --only LIST                    a comma-separated subset of kaniko,build-tools,runtimes,controller
#   --skip-present                 do not rebuild kaniko, build-tools or a runtime image whose tag the registry
#                                  already has (their tags change with their content: a re-run after a failure,
#                                  or an upgrade that changed only the controller); the controller is always
#                                  built (its tag is the package version, not its content)
#   --ca-file FILE                 a CA bundle the controller build trusts for `npm ci` (a TLS-intercepting proxy)
#   --docker-config FILE           registry credentials, docker's config.json (default $DOCKER_CONFIG/config.json
#                                  or ~/.docker/config.json when present; `docker login` / `skopeo login` write it)
#
# Output: progress on stderr; on stdout the settings for the controller's config (KEY=VALUE lines) and
# the controller image by digest (a `# controller image:` line) for kustomize `images:` or the Helm chart.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/kaniko-runc.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
registry= insecure= skip_present= kaniko_source=git:https://github.com/osscontainertools/kaniko@v1.28.3 only=kaniko,build-tools,runtimes,controller ca_file=
docker_config=${DOCKER_CONFIG:+$DOCKER_CONFIG/config.json}
[ -z "$docker_config" ] && [ -f "$HOME/.docker/config.json" ] && docker_config=$HOME/.docker/config.json
declare -A base=()
while [ "$#" -gt 0 ]; do
  case $1 in
    --registry) registry=${2:?--registry needs HOST[:PORT]/PREFIX}; shift 2 ;;
    --insecure) insecure=1; shift ;;
    --skip-present) skip_present=1; shift ;;
    --base) [[ ${2:-} == *=* ]] || { echo "scripts/images.sh: --base needs KEY=IMAGE, not '${2:-}'" >&2; exit 2; }; base[${2%%=*}]=${2#*=}; shift 2 ;;
    --kaniko-source) kaniko_source=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --ca-file) ca_file=${2:?}; [ -f "$ca_file" ] || { echo "scripts/images.sh: --ca-file $ca_file does not exist" >&2; exit 2; }; shift 2 ;;
    --docker-config) docker_config=${2:?}; [ -f "$docker_config" ] || { echo "scripts/images.sh: --docker-config $docker_config does not exist" >&2; exit 2; }; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "scripts/images.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
[ -n "$registry" ] || { echo "scripts/images.sh: --registry HOST[:PORT]/PREFIX is required (--help)" >&2; exit 2; }
registry=${registry%/}
[[ $registry == */* ]] || { echo "scripts/images.sh: --registry needs a prefix after the host: $registry/sless" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "scripts/images.sh: run as root (kaniko runs in runc)" >&2; exit 1; }
for tool in go umoci runc skopeo jq git; do
  command -v "$tool" >/dev/null || { echo "scripts/images.sh: $tool is not installed (Debian: apt-get install golang umoci runc skopeo jq git)" >&2; exit 1; }
done
node=$repo/node_modules/.bin/node
[ -x "$node" ] || node=node
# From the repository: `--import tsx` resolves tsx from the working directory, not the script's.
names=$(cd "$repo" && "$node" --import tsx scripts/image-names.ts "$registry") || { echo "scripts/images.sh: could not list the image names (npm ci in $repo first; Node.js >= 22.19)" >&2; exit 1; }
names=$(sed 's/^sless-build-tools /build-tools /' <<<"$names")
for key in "${!base[@]}"; do
  grep -q "^$key " <<<"$names" || { echo "scripts/images.sh: --base $key: not one of $(cut -d' ' -f1 <<<"$names" | tr '\n' ' ')" >&2; exit 2; }
done
wants() { [[ ,$only, == *,$1,* ]]; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sless-images.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "[images $(date +%H:%M:%S)] $*" >&2; }

version=${kaniko_source##*@}
kaniko_image=$registry/kaniko:$version
skopeo_tls=(); kaniko_tls=(); inspect_tls=()
[ -n "$insecure" ] && skopeo_tls=(--dest-tls-verify=false) && kaniko_tls=(--insecure --insecure-pull) && inspect_tls=(--tls-verify=false)
authfile=(); mounts=()
[ -n "$docker_config" ] && authfile=(--authfile "$docker_config") && mounts+=("MOUNT=$docker_config:/kaniko/.docker/config.json")
# present IMAGE: with --skip-present, the registry already has IMAGE (said on stderr).
present() {
  [ -n "$skip_present" ] && skopeo inspect --raw "${inspect_tls[@]}" "${authfile[@]}" "docker://$1" >/dev/null 2>&1 && log "$1 is in the registry: not rebuilt (--skip-present)"
}

# kaniko: always built (the other images are built by it); pushed when asked for.
log "kaniko executor from $kaniko_source"
kaniko_executor "$kaniko_source" "$work/executor"
oci_new "$work/kaniko" "$version"
kaniko_rootfs "$work/kaniko/bundle/rootfs" "$work/executor"
oci_finish "$work/kaniko" "$version" "$work/kaniko-layout" "${KANIKO_CONFIG[@]}"
if wants kaniko && ! present "$kaniko_image"; then
  skopeo copy -q "${skopeo_tls[@]}" "${authfile[@]}" "oci:$work/kaniko-layout:$version" "docker://$kaniko_image"
  log "pushed $kaniko_image"
fi

# build KEY DEST DOCKERFILE ARG CONTEXT: kaniko builds DEST and pushes it; prints its digest.
build() {
  local key=$1 dest=$2 dockerfile=$3 arg=$4 ctx=$5 extra=()
  local args=(--force --context=dir:///workspace "--dockerfile=/workspace/$dockerfile" "--destination=$dest"
    --digest-file=/out/digest --snapshot-mode=redo --use-new-run "${kaniko_tls[@]}")
  [ -n "${base[$key]:-}" ] && args+=("--build-arg=$arg=${base[$key]}")
  if [ "$key" = controller ] && [ -n "$ca_file" ]; then
    extra+=("MOUNT=$(realpath "$ca_file"):/etc/sless-build-ca/ca.crt") && args+=(--build-arg=NODE_EXTRA_CA_CERTS=/etc/sless-build-ca/ca.crt)
  fi
  local t=$SECONDS
  # stdin from /dev/null: runc hands its stdin to the container, which would eat the image list the loop below reads.
  if ! kaniko_runc "$work/kaniko-layout:$version" "$work/run-$key" "$ctx" "${mounts[@]}" "${extra[@]}" -- "${args[@]}" </dev/null; then
    tail -n 40 "$work/run-$key/kaniko.log" >&2
    echo "scripts/images.sh: kaniko failed to build $dest from $dockerfile" >&2
    exit 1
  fi
  log "built and pushed $dest@$(cat "$work/run-$key/out/digest") in $((SECONDS - t)) s"
  cat "$work/run-$key/out/digest"
}

while read -r key dest dockerfile arg _upstream; do
  case $key in
    build-tools) wants build-tools && ! present "$dest" || continue; build "$key" "$dest" "$dockerfile" "$arg" "$repo/runtimes" >/dev/null ;;
    controller)
      wants controller || continue
      # The context deploy/Dockerfile.dockerignore lets through (kaniko reads .dockerignore only at the context root).
      ctx=$work/controller-context
      mkdir -p "$ctx/deploy"
      (cd "$repo" && tar -cf - --exclude='*.test.ts' package.json package-lock.json tsconfig.json scripts bin src) | tar -C "$ctx" -xf -
      cp "$repo/deploy/Dockerfile" "$ctx/deploy/Dockerfile"
      controller_image="${dest%:*}@$(build "$key" "$dest" "$dockerfile" "$arg" "$ctx")"
      ;;
    *) wants runtimes && ! present "$dest" || continue; build "$key" "$dest" "$dockerfile" "$arg" "$repo/runtimes" >/dev/null ;;
  esac
done <<<"$names"

tools_image=$(awk '$1 == "build-tools" { print $2 }' <<<"$names")
cat <<OUT
# The controller's settings (deploy/config.yaml, or the chart's values):
SLESS_RUNTIME_IMAGE_PREFIX=$registry
SLESS_KANIKO_IMAGE=$kaniko_image
SLESS_BUILD_TOOLS_IMAGE=$tools_image
OUT
[ -n "${controller_image:-}" ] && echo "# controller image: $controller_image"
exit 0
