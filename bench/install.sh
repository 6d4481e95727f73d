# What the benches install, sourced by bench/run.sh and bench/metastable/run (from the
# repository's top): Debian's packages they measure with, and Debian's `retry` as a peer.

# need PROGRAM PACKAGE: install PACKAGE from Debian's packages when PROGRAM is not on PATH.
need() {
  command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2"; }
}

# unpack_debian_retry DIR: Debian's `retry` (minfrin's), unpacked under DIR rather than
# installed, so that it shadows nothing; exports PEER_MINFRIN, its path. A download that fails
# stops the bench and says why.
unpack_debian_retry() {
  local dir=$1
  PEER_MINFRIN="$PWD/$dir/minfrin/usr/bin/retry"
  export PEER_MINFRIN
  [ -x "$PEER_MINFRIN" ] && return
  # A machine whose package lists were never fetched knows no `retry` to download.
  if ! (cd "$dir" && apt-get download retry >/dev/null 2>&1) &&
    ! (apt-get update -qq && cd "$dir" && apt-get download retry >/dev/null); then
    echo "bench: could not download Debian's retry (apt-get download retry)" >&2
    return 1
  fi
  dpkg-deb -x "$dir"/retry_*.deb "$dir/minfrin"
}
