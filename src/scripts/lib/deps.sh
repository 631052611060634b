# @file deps.sh: the one place the scripts install Debian packages. Source it, then call
#
#   tracer_apt_install PKG...
#
# It installs only those of PKG that are not installed yet (nothing at all, not even `apt-get update`, when
# every one is), non-interactively and quietly, as root or through sudo. Without root, sudo, dpkg or apt-get
# it prints what is missing and why it cannot install it, and returns 1 (so `set -e` callers stop there).
# Messages start with the name of the script that was run ("setup: installing ...").

tracer_apt_install() {
  local who
  who=$(basename -- "$0")
  [ $# -gt 0 ] || return 0
  local missing=() p
  for p in "$@"; do
    # "install ok installed" only: `dpkg -s` also succeeds for removed packages whose config files remain.
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
    echo "$who: missing ${missing[*]}, and this is not a Debian system (no apt-get/dpkg-query): install them by hand" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "$who: missing ${missing[*]}: need root or sudo to apt-get install them" >&2
      return 1
    }
    sudo=sudo
  fi
  echo "$who: installing ${missing[*]}" >&2
  # The package lists of a fresh container are empty, and stale ones name versions no longer on the mirror.
  $sudo apt-get update -qq || { echo "$who: apt-get update failed" >&2; return 1; }
  # env, not a prefix assignment: sudo drops the caller's environment, env sets it for apt-get itself.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
    { echo "$who: apt-get install ${missing[*]} failed" >&2; return 1; }
}
