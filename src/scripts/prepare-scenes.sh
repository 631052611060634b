#!/usr/bin/env bash
# @file prepare-scenes.sh: unpacks the third-party benchmark scenes from their folder ($1, else $TRACER_SHARED_SCENES,
# else .benchscenes/shared in the checkout) into .benchscenes/ (git-ignored), and adds what the benchmark needs: a ceiling light and camera files for the
# conference room (it ships no emitter), and a camera for the sports car.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-${TRACER_SHARED_SCENES:-$root/.benchscenes/shared}}
dst=$root/.benchscenes
[ -d "$src" ] || { echo "prepare-scenes: no scene folder at $src (pass one as the first argument)" >&2; exit 1; }
mkdir -p "$dst"
for s in conference sportscar bunny; do
  if [ ! -d "$dst/$s" ] && [ -f "$src/$s.tar.xz" ]; then tar -xJf "$src/$s.tar.xz" -C "$dst"; fi
done
[ -d "$dst/cornellbox" ] || { [ -d "$src/cornellbox" ] && cp -r "$src/cornellbox" "$dst/"; } || true

if [ -f "$dst/conference/conference.obj" ] && [ ! -f "$dst/conference/conference_lit.obj" ]; then
  c=$dst/conference
  # Two ceiling panels facing down (-y), 1.5 units under the ceiling, so the room has emitters.
  { cat "$c/conference.obj"; printf '\n# added by prepare-scenes.sh: two ceiling lights facing down\nmtllib conference_lit.mtl\no added_lights\nusemtl added_light\n'
    for x0 in 0 900; do
      x1=$((x0 + 400))
      printf 'v %s 490 -600\nv %s 490 -600\nv %s 490 100\nv %s 490 100\nf -4 -3 -2 -1\n' "$x0" "$x1" "$x1" "$x0"
    done; } >"$c/conference_lit.obj"
  sed -i 's/^mtllib conference.mtl/mtllib conference_lit.mtl/' "$c/conference_lit.obj"
  { cat "$c/conference.mtl"; printf '\nnewmtl added_light\nKd 0.8 0.8 0.8\nKe 8 8 8\n'; } >"$c/conference_lit.mtl"
  printf 'eye -650 300 450\nlook_at 1000 120 -600\nup 0 1 0\nfov 55\n' >"$c/conference_lit.camera"
fi
if [ -f "$dst/sportscar/sportsCar.obj" ] && [ ! -f "$dst/sportscar/sportsCar.camera" ]; then
  printf 'eye 4.2 1.5 4.6\nlook_at 0 0.45 0\nup 0 1 0\nfov 32\n' >"$dst/sportscar/sportsCar.camera"
fi
echo "$dst"
